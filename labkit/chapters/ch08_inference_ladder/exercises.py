"""Chapter 08's exercises: images per second from a timing, how many batches pay back a
compile, and how much of the whole climb one step is worth (gains multiply, they do not add).

The references are labkit.chapters.ch08_inference_ladder.ladder's own functions, which the chapter's table uses."""

from __future__ import annotations

import math
import random

from labkit.chapters.ch08_inference_ladder import ladder
from labkit.exercises.grader import Exercise


def _close(expected: object, got: object) -> bool:
    try:
        if isinstance(expected, float) and math.isinf(expected):
            return math.isinf(float(got)) and float(got) > 0
        return math.isclose(float(got), float(expected), rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def reference_speedup(base: tuple[int, float], rung: tuple[int, float]) -> float:
    (base_batch, base_s), (batch, median_s) = base, rung
    return (batch / median_s) / (base_batch / base_s)


SPEEDUP = Exercise(
    id="08.speedup",
    title="a speed-up in images per second, across batch sizes",
    task="Write speedup(base, rung) -> float. Each argument is (batch, median seconds per "
         "call). Return how many times more images per second the rung infers than the base: "
         "a call on batch 256 that takes 3x as long as a call on batch 64 is still faster.",
    reference=reference_speedup,
    make_case=lambda rng: ((rng.choice([8, 16, 64, 256]), rng.uniform(1e-3, 0.5)),
                           (rng.choice([8, 16, 64, 256]), rng.uniform(1e-3, 0.5))),
    edge_cases=[((64, 0.1), (256, 0.3)), ((64, 0.1), (64, 0.1))],
    hint="images per second = batch / seconds per call; the speed-up is the ratio of the two.",
    same=_close,
    level=1,
)


def reference_payback(compile_s: float, before_s_per_image: float, after_s_per_image: float,
                      batch: int) -> float:
    return ladder.payback_batches(compile_s, before_s_per_image, after_s_per_image, batch)


PAYBACK = Exercise(
    id="08.payback",
    title="how many batches pay back a compile",
    task="Write payback(compile_s, before_s_per_image, after_s_per_image, batch) -> float: the "
         "number of batches after which the time spent compiling has been won back by the "
         "faster rung. If the compiled rung is not faster, it never pays back: return "
         "float('inf').",
    reference=reference_payback,
    make_case=lambda rng: (rng.uniform(1, 120), rng.uniform(1e-5, 1e-3),
                           rng.uniform(1e-5, 1e-3), rng.choice([16, 64, 256])),
    edge_cases=[(30.0, 2e-4, 1e-4, 64), (30.0, 1e-4, 2e-4, 64), (30.0, 1e-4, 1e-4, 64)],
    hint="Each batch saves (before - after) * batch seconds. Divide the compile time by it; "
         "a saving of zero or less never pays back.",
    same=_close,
    level=2,
)


def reference_share(gains: dict[str, float], step: str) -> float:
    total = math.prod(gains.values())
    return math.log(gains[step]) / math.log(total)


def _gains_case(rng: random.Random) -> tuple:
    names = rng.sample(["TF32", "channels_last", "fp16", "fold", "compile", "graphs", "batch"],
                       rng.randint(2, 6))
    gains = {n: rng.uniform(0.8, 3.0) for n in names}
    while abs(math.log(math.prod(gains.values()))) < 0.05:  # a total of ~1x has no shares
        gains[names[0]] *= 1.5
    return gains, rng.choice(names)


SHARE_OF_CLIMB = Exercise(
    id="08.share_of_climb",
    title="how much of the whole climb one step is worth",
    task="Write share(gains, step) -> float. gains maps each step to its own speed-up (its rung "
         "over the rung before it); the climb's total is their product, not their sum. Return the "
         "share of the total that one step contributes, measured on a log scale: "
         "log(gains[step]) / log(total). The shares add up to 1; a step that slowed things down "
         "has a negative share.",
    reference=reference_share,
    make_case=_gains_case,
    edge_cases=[({"a": 2.0, "b": 2.0}, "a"), ({"a": 4.0, "b": 0.5}, "b")],
    hint="math.prod(gains.values()) is the total speed-up; math.log turns products into sums.",
    same=_close,
    level=3,
)

EXERCISES = [SPEEDUP, PAYBACK, SHARE_OF_CLIMB]
