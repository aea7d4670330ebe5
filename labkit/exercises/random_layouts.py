"""Random layouts a real tensor could have, for exercises that grade against torch.

Shared by the chapters' exercises (strides, storage indices, contiguity), so that no chapter
imports another's private helpers.
"""

from __future__ import annotations

import random


def random_shape(rng: random.Random, max_dims: int = 4, max_size: int = 6) -> tuple[int, ...]:
    """A shape of 1 to max_dims dims, now and then with a zero-size dim."""
    return tuple(rng.randint(0 if rng.random() < 0.05 else 1, max_size)
                 for _ in range(rng.randint(1, max_dims)))


def contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    """Row-major strides in elements (size-0 and size-1 dims step like size 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


def random_strides(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides a real view could have: contiguous, permuted, with gaps, broadcast, or any."""
    strides = contiguous_strides(shape)
    pick = rng.random()
    if pick < 0.3:
        order = list(range(len(shape)))
        rng.shuffle(order)
        strides = [strides[k] for k in order]          # a permute
    elif pick < 0.5:
        upto = rng.randrange(len(shape))
        strides = [s * 2 if k <= upto else s for k, s in enumerate(strides)]  # a step slice
    elif pick < 0.6:
        strides[rng.randrange(len(shape))] = 0         # an expand
    elif pick < 0.75:
        strides = [rng.choice((0, 1, 2, 3, 4, 6, 8, 12)) for _ in shape]  # as_strided
    return tuple(strides)
