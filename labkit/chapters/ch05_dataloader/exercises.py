"""Chapter 05's exercises: the bytes of a batch, the shared memory a loader keeps in flight,
and the knee of a worker sweep. The first reference asks torch; the other two are the
rules labkit's own loader code uses (`labkit.chapters.ch05_dataloader.shm`, `labkit.chapters.ch05_dataloader.loader_sweep`), which the
chapter's tests check against real loaders."""

from __future__ import annotations

import random

import torch

from labkit.chapters.ch05_dataloader import loader_sweep, shm
from labkit.exercises.grader import Exercise

_DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def reference_batch_bytes(batch_size: int, channels: int, side: int, dtype: str) -> int:
    return torch.empty((batch_size, channels, side, side), dtype=getattr(torch, dtype),
                       device="meta").nbytes


BATCH_BYTES = Exercise(
    id="05.batch_bytes",
    title="the bytes of one collated batch",
    task="Write batch_bytes(batch_size, channels, side, dtype) -> int: how many bytes a batch "
         "of square images [batch_size, channels, side, side] takes, dtype given by name "
         "('uint8', 'float16', 'bfloat16', 'float32', 'float64'), without calling torch.",
    reference=reference_batch_bytes,
    make_case=lambda rng: (rng.randint(1, 512), rng.choice((1, 3, 4)), rng.randint(8, 512),
                           rng.choice(_DTYPES)),
    edge_cases=[(256, 3, 224, "float32"), (256, 3, 224, "uint8"), (1, 1, 8, "bfloat16")],
    hint="Elements times bytes per element; a bfloat16 takes as many bytes as a float16.",
    level=1,
)


def reference_in_flight_bytes(num_workers: int, prefetch_factor: int | None, batch_bytes: int) -> int:
    return shm.in_flight_bytes(num_workers, prefetch_factor, batch_bytes)


IN_FLIGHT = Exercise(
    id="05.in_flight_bytes",
    title="shared memory a loader keeps in flight",
    task="Write in_flight_bytes(num_workers, prefetch_factor, batch_bytes) -> int: the bytes "
         "of batches a DataLoader holds in /dev/shm at once. Each worker keeps prefetch_factor "
         "batches queued (None means the default, 2) and the main process holds the one it is "
         "using; with no workers nothing goes through shared memory.",
    reference=reference_in_flight_bytes,
    make_case=lambda rng: (rng.randint(0, 16), rng.choice((None, 1, 2, 4, 8)),
                           rng.randint(1, 200 * 2**20)),
    edge_cases=[(0, None, 1000), (2, None, 1000), (4, 1, 1000), (1, 8, 3)],
    hint="(workers x prefetch + 1) batches, but 0 when there are no workers.",
    level=2,
)


def reference_knee(throughputs: dict[int, float], tolerance: float) -> int:
    return loader_sweep.find_knee(list(throughputs.items()), tolerance=tolerance).workers


def _random_sweep(rng: random.Random) -> tuple[dict[int, float], float]:
    counts = sorted(rng.sample(range(0, 17), rng.randint(1, 7)))
    ceiling = rng.uniform(200, 3000)
    per_worker = rng.uniform(50, 900)
    noise = rng.uniform(0, 0.08)
    throughputs = {w: min(ceiling, per_worker * max(w, 0.7)) * (1 + rng.uniform(-noise, noise))
                   for w in counts}
    return throughputs, rng.choice((0.05, 0.1, 0.2))


KNEE = Exercise(
    id="05.knee",
    title="the knee of a worker sweep",
    task="Write knee(throughputs, tolerance) -> int: given {num_workers: samples per second} "
         "from a sweep, the fewest workers whose throughput is at least (1 - tolerance) times "
         "the best one measured.",
    reference=reference_knee,
    make_case=_random_sweep,
    edge_cases=[({0: 100.0, 1: 190.0, 2: 200.0, 4: 205.0}, 0.1), ({0: 50.0}, 0.1),
                ({4: 300.0, 0: 100.0, 2: 290.0}, 0.05)],
    hint="Find the best throughput first; then walk the worker counts in increasing order "
         "(the dict may not be sorted) and stop at the first one that is close enough.",
    level=3,
)

EXERCISES = [BATCH_BYTES, IN_FLIGHT, KNEE]
