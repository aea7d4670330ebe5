"""Chapter 08's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""

import math

import torch


def right_speedup(base, rung_):
    return (rung_[0] / rung_[1]) / (base[0] / base[1])


def right_payback(compile_s, before, after, batch):
    saved = (before - after) * batch
    return float("inf") if saved <= 0 else compile_s / saved


def right_share(gains, step):
    return math.log(gains[step]) / math.log(math.prod(gains.values()))


def right_relative_error(out, ref):
    return float(torch.linalg.vector_norm(out.double() - ref.double()) / torch.linalg.vector_norm(ref.double()))


def right_first_broken(ref, rungs):
    from labkit.chapters.ch08_inference_ladder import numerics

    for name, out, m in rungs:
        err = right_relative_error(out, ref)
        if not torch.isfinite(out).all() or err > numerics.TOLERANCES[m]:
            return name
    return None


def right_replayed(model, x, new_x):
    with torch.no_grad():
        if x.is_cuda:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                model(x)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = model(x)
            x.copy_(new_x)
            g.replay()
            return out.clone()
        x.copy_(new_x)
        return model(x)


def stale_replay(model, x, new_x):  # forgets to copy the new input into the static buffer
    with torch.no_grad():
        return model(x)


RIGHT = {"08.speedup": right_speedup, "08.payback": right_payback, "08.share_of_climb": right_share,
         "08.relative_error": right_relative_error, "08.first_broken_rung": right_first_broken,
         "08.graph_replay": right_replayed}
WRONG = {
    "08.speedup": [lambda base, r: base[1] / r[1]],
    "08.payback": [lambda c, b, a, n: c / ((b - a) * n)],
    "08.share_of_climb": [lambda g, s: (g[s] - 1) / (math.prod(g.values()) - 1)],
    "08.relative_error": [lambda o, r: float(torch.linalg.vector_norm(o - r) / o.numel())],
    "08.first_broken_rung": [lambda ref, rungs: rungs[0][0]],
    "08.graph_replay": [stale_replay],
}
