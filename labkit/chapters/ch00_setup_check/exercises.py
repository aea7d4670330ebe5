"""Chapter 00's exercises: read a benchmark the way labkit.measure.bench does. The bandwidth of a
copy (bytes read plus bytes written, as the copy ceiling counts them), then the median and
IQR of timing samples (torch.quantile is the reference, the interpolation bench uses)."""

from __future__ import annotations

import math
import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise


def _close_numbers(expected: object, got: object) -> bool:
    """Equal to 1 part in 10^9 (floating-point arithmetic in another order is still right)."""
    try:
        pairs = list(zip(expected, got, strict=True)) if isinstance(expected, tuple) else [(expected, got)]
        return all(not isinstance(g, bool) and math.isclose(float(e), float(g), rel_tol=1e-9, abs_tol=1e-15)
                   for e, g in pairs)
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------- level 1
def reference_copy_gbps(shape: tuple[int, ...], dtype: torch.dtype, seconds: float) -> float:
    nbytes = torch.empty(shape, dtype=dtype).nbytes  # what dst.copy_(src) reads; it writes as much
    return 2 * nbytes / seconds / 1e9


def _copy_case(rng: random.Random) -> tuple:
    shape = tuple(rng.randint(1, 64) for _ in range(rng.randint(1, 3)))
    dtype = rng.choice((torch.float32, torch.float16, torch.float64, torch.int8, torch.bfloat16))
    return shape, dtype, rng.uniform(1e-6, 1e-2)


COPY_GBPS = Exercise(
    id=discovery.exercise_id(__name__, "copy_gbps"),
    title="the bandwidth of a copy",
    task="dst.copy_(src) took `seconds` for tensors of this shape and dtype. Write "
         "copy_gbps(shape, dtype, seconds) -> float: the bandwidth in GB/s (10^9 bytes per "
         "second) as the copy ceiling counts it, bytes read plus bytes written.",
    reference=reference_copy_gbps,
    make_case=_copy_case,
    edge_cases=[((1024, 1024), torch.float32, 1e-3), ((10,), torch.float16, 1e-6),
                ((3, 0), torch.float32, 1e-3)],
    hint="What does a copy do to each byte of src, and to each byte of dst? Count both.",
    same=_close_numbers,
    level=1,
)


# ---------------------------------------------------------------- level 2
def reference_median_and_iqr(samples: list[float]) -> tuple[float, float]:
    q25, q50, q75 = torch.quantile(torch.tensor(samples, dtype=torch.float64),
                                   torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)).tolist()
    return q50, q75 - q25


def _samples_case(rng: random.Random) -> tuple:
    typical = rng.uniform(1e-5, 1e-2)
    samples = [typical * rng.uniform(0.95, 1.1) for _ in range(rng.randint(1, 30))]
    if rng.random() < 0.5:  # an outlier or two, as a page fault or another process makes them
        samples[rng.randrange(len(samples))] *= rng.uniform(5, 20)
    return (samples,)


MEDIAN_AND_IQR = Exercise(
    id=discovery.exercise_id(__name__, "median_and_iqr"),
    title="the median and IQR of timing samples",
    task="Write median_and_iqr(samples) -> (median, iqr) for a list of timings in seconds, as "
         "labkit.measure.bench reports them: the median, and the 75th minus the 25th percentile, "
         "with percentiles interpolated linearly between the sorted samples.",
    reference=reference_median_and_iqr,
    make_case=_samples_case,
    edge_cases=[([1.0],), ([1.0, 2.0],), ([3.0, 1.0, 2.0],), ([1.0, 2.0, 3.0, 4.0],),
                ([1.0, 1.0, 1.0, 100.0],)],
    hint="A percentile is a position in the sorted samples. What do you do when that "
         "position falls between two samples? Check your answer against numpy.percentile.",
    same=_close_numbers,
    level=2,
)

EXERCISES = [COPY_GBPS, MEDIAN_AND_IQR]
