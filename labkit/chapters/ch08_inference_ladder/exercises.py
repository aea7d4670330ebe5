"""Chapter 08's exercises: images per second from a timing, how many batches pay back a
compile, how much of the whole climb one step is worth (gains multiply, they do not add);
then three graded against torch itself: the gate's relative error (torch.linalg), which rung
of a list breaks the numerics gate, and replaying a captured CUDA graph on new input against
eager PyTorch's output (on a CPU, the same static-buffer contract without the graph)."""

from __future__ import annotations

import math
import random

import torch

from labkit.chapters.ch08_inference_ladder import ladder, numerics
from labkit.core import discovery
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
    id=discovery.exercise_id(__name__, "speedup"),
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
    id=discovery.exercise_id(__name__, "payback"),
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
    id=discovery.exercise_id(__name__, "share_of_climb"),
    title="how much of the whole climb one step is worth",
    task="Write share(gains, step) -> float. gains maps each step to its own speed-up (its rung "
         "over the rung before it); take the total as their product, not their sum. Return the "
         "share of that total one step contributes, on a log scale: log(gains[step]) / log(total). "
         "The shares add up to 1; a step that slowed things down has a negative share. The product "
         "equals the climb end to end only when each base ran as fast in its step as when it was "
         "timed: the fold under 'Do the steps simply add up?' compares the two on the run's own "
         "numbers.",
    reference=reference_share,
    make_case=_gains_case,
    edge_cases=[({"a": 2.0, "b": 2.0}, "a"), ({"a": 4.0, "b": 0.5}, "b")],
    hint="math.prod(gains.values()) is the total speed-up; math.log turns products into sums.",
    same=_close,
    level=3,
)

def _close_rel(expected: object, got: object) -> bool:
    try:
        return math.isclose(float(got), float(expected), rel_tol=1e-6, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def reference_relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(out.double() - ref.double()) / torch.linalg.vector_norm(ref.double()))


def _logits_case(rng: random.Random) -> tuple:
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    ref = 3 * torch.randn(rng.randint(1, 16), rng.choice([10, 100, 1000]), generator=g)
    noise = torch.randn(ref.shape, generator=g) * rng.choice([1e-4, 1e-2, 0.3])
    return (ref + noise, ref)


RELATIVE_ERROR = Exercise(
    id=discovery.exercise_id(__name__, "relative_error"),
    title="the numerics gate's error: how far a rung's logits are from float32's",
    task="Write relative_error(out, ref) -> float: ||out - ref|| / ||ref||, the L2 norm over the "
         "whole batch of logits (every element), computed in float64 so the rounding of the "
         "check itself does not count.",
    reference=reference_relative_error,
    make_case=_logits_case,
    edge_cases=[(torch.ones(2, 3), torch.ones(2, 3)), (torch.zeros(1, 4), torch.ones(1, 4))],
    hint="torch.linalg.vector_norm(x) is the L2 norm of every element; .double() first.",
    same=_close_rel,
    cases=60,
    level=1,
)


def reference_first_broken(ref: torch.Tensor, rungs: list) -> str | None:
    # computed here with torch's own norm, not through numerics.check (the gate under test):
    # the task's test, the relative L2 error against the tolerance of the rung's math
    ref64 = ref.double()
    for name, out, math_ in rungs:
        if not bool(torch.isfinite(out).all()):
            return name
        error = float(torch.linalg.vector_norm(out.double() - ref64) / torch.linalg.vector_norm(ref64))
        if error > numerics.TOLERANCES[math_]:
            return name
    return None


def _rungs_case(rng: random.Random) -> tuple:
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    ref = 3 * torch.randn(16, 100, generator=g)
    rungs, broken_at = [], rng.choice([None, 0, 1, 2, 3])
    for i, (name, math_, noise) in enumerate([("TF32", "tf32", 2e-3), ("fp16", "float16", 5e-3),
                                              ("folding", "float16", 6e-3),
                                              ("compile", "float16", 6e-3)]):
        out = ref + noise * torch.randn(ref.shape, generator=g)
        if i == broken_at:
            out = out * rng.choice([1.2, 0.8]) + rng.choice([0.0, 0.3])
        rungs.append((name, out, math_))
    return (ref, rungs)


FIRST_BROKEN = Exercise(
    id=discovery.exercise_id(__name__, "first_broken_rung"),
    title="which rung breaks the numerics gate",
    task="Write first_broken(ref, rungs) -> str | None. ref is strict float32's logits; rungs "
         "is a list of (name, logits, math) in climbing order. Return the name of the first rung "
         "whose relative L2 error exceeds the tolerance of its math (numerics.TOLERANCES, the "
         "gate's table above), or whose logits are not all finite; None if every rung passes.",
    reference=reference_first_broken,
    make_case=_rungs_case,
    hint="Compute each rung's ||out - ref|| / ||ref|| and compare it with the tolerance of its "
         "math; stop at the first that is over.",
    cases=40,
    level=2,
)


def reference_replayed(model: torch.nn.Module, x: torch.Tensor, new_x: torch.Tensor) -> torch.Tensor:
    """What a correct replay must give: eager PyTorch on the new input."""
    with torch.no_grad():
        return model(new_x)


def _model_case(rng: random.Random) -> tuple:
    from labkit.core import env

    device = env.device()
    torch.manual_seed(rng.randrange(2**31))
    width = rng.choice([4, 8, 16])
    model = torch.nn.Sequential(torch.nn.Conv2d(3, width, 3, padding=1), torch.nn.BatchNorm2d(width),
                                torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                torch.nn.Linear(width, 10)).eval().to(device)
    size = rng.choice([8, 16])
    return (model, torch.randn(2, 3, size, size, device=device),
            torch.randn(2, 3, size, size, device=device))


def _tensors_close(expected: object, got: object) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and bool(torch.allclose(got.float(), expected.float(), rtol=1e-4, atol=1e-5)))


GRAPH_REPLAY = Exercise(
    id=discovery.exercise_id(__name__, "graph_replay"),
    title="replay a captured CUDA graph on new input, and match eager",
    task="Write replayed(model, x, new_x) -> Tensor. On a GPU: warm up on a side stream, "
         "capture model(x) in a torch.cuda.CUDAGraph (under torch.no_grad()), copy new_x INTO x "
         "(a graph reads the same memory every replay), replay, return a clone of the captured "
         "output. On a CPU: copy new_x into x, return model(x).",
    reference=reference_replayed,
    make_case=_model_case,
    hint="Warm up first: s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream()); "
         "with torch.cuda.stream(s): run model(x) three times; torch.cuda.current_stream()"
         ".wait_stream(s). Then g = torch.cuda.CUDAGraph(); with torch.cuda.graph(g): out = "
         "model(x) -- then x.copy_(new_x); g.replay(); return out.clone(). Forgetting the copy "
         "replays the old input.",
    same=_tensors_close,
    cases=8,
    level=3,
)

EXERCISES = [SPEEDUP, PAYBACK, SHARE_OF_CLIMB, RELATIVE_ERROR, FIRST_BROKEN, GRAPH_REPLAY]
