"""Chapter 03's verdict-deciding measurement (C7a), runnable outside the notebook.

`benchmarks/reproduce.py 03_memory_layouts --runs 3` calls `measure_verdicts` in fresh
processes. Like the notebook: ResNet-50 (random weights) in NCHW and channels_last, timed
interleaved through `Chapter.measured` (so the trust rule sees the flags); on a GPU fp16 at
batch 16, 64 and 128, 224x224, judged where the device bounds images per second
(`claims.gpu_judged`: b64 and b128 by a CUDA Graph replay loop's wall time, stated in advance,
the eager loops shown beside them); b16 is shown, never judged: the page's eager lesson
(`cases.eager_lesson`, `cases.LESSON_BATCH`) read beside these fresh processes (review
2026-12-05t 03-04 item 1); the form judged is part of what the runs must
agree on (benchmarks/reproduce.py compares outcome, what it depends on, and form); on a CPU float32 at env.sizes()'s batch and image. C22 decides by bytes copied and kernel names and C7b by
errors raised and outputs compared, not by timings, so neither is repeated. A record written
before C7 was split keeps these runs under 'C7': C7a is judged from them (`Claim.evidence_from`).
quick=True: a 64x64 image, batch 1, two rounds (a smoke test, not a measurement).
"""

from __future__ import annotations

import copy

import torch

from labkit import claims, session
from labkit.chapters.ch03_memory_layouts import cases
from labkit.chapters.ch03_memory_layouts.claims import GRAPH_TIME, WALL_TIME, loop_ratio
from labkit.chapters.ch03_memory_layouts.claims import deciding as c7_deciding
from labkit.models import resnet

KEY = "03_memory_layouts"
CLAIM_IDS = ("C7a",)


def measure_verdicts(quick: bool = False) -> list[claims.Verdict]:
    """C7a measured and judged here, in the form the notebook judges on this machine."""
    chapter = session.open(KEY, announce=False)
    device, on_gpu = chapter.device, chapter.on_gpu
    dtype = torch.float16 if on_gpu else torch.float32
    image = 64 if quick else chapter.sizes.cnn_image
    # on a GPU the seed's batch 64 and 128: C7 judges img/s where the device bounds it; the eager
    # lesson's batch first, as the notebook's sweep runs it (shown: `cases.c7_split` judges b64, b128)
    batches = [1] if quick else ([cases.LESSON_BATCH, 64, 128] if on_gpu else [1, chapter.sizes.cnn_batch])
    net = resnet.resnet50().eval().to(device, dtype)
    net_cl = copy.deepcopy(net).to(memory_format=torch.channels_last)
    runs, flagged_all = [], []
    for batch in batches:
        x = torch.randn(batch, 3, image, image, device=device, dtype=dtype)
        cmp, flagged = cases.nchw_vs_nhwc(chapter, net, net_cl, x, rep_ms=20 if quick else 400,
                                          rounds=2 if quick else (5 if on_gpu else 3),
                                          case=f"{str(dtype).replace('torch.', '')} b{batch}")
        flagged_all += flagged
        runs.append(cases.resnet_run(cmp, dtype, batch, image))
        if on_gpu:  # as the notebook: device-busy time beside wall time, and the graph replays
            runs[-1].update(cases.device_busy(net, net_cl, x))
            flagged_all += runs[-1].pop("graph_flags", [])
    judged, shown = cases.c7_split(runs, on_gpu and not quick)
    if on_gpu and not quick:  # the notebook's label, naming the batch and quantity judged
        form = cases.c7_gpu_form(device, image, judged)
    else:
        form = chapter.analogue_form(cases.C7_GPU_SEED if on_gpu else cases.C7_CPU_SEED, f"{str(dtype).replace('torch.', '')}, batch "
                                     f"{', '.join(map(str, batches))}, {image}x{image}")
    return [chapter.judge("C7a", {"runs": judged, "other_runs": shown, "flags": flagged_all,
                                  "device": str(device)}, form=form)]


def deciding_ratios(verdict: claims.Verdict) -> dict[str, float]:
    """The NHWC/NCHW speed ratio that decided, by judged run (graph replay, wall time, or
    device-busy where host-bound),
    and each shown run's: its ratio, and every run's wall ratio in a back-to-back loop beside it."""
    found = {}
    judged = list(verdict.evidence["runs"])
    for r in judged + list(verdict.evidence.get("other_runs") or ()):
        ratio, _, basis = c7_deciding(r)
        name, role = f"{r['dtype']} b{r['batch']}", "decides" if r in judged else "shown"
        clock = {WALL_TIME: "wall", GRAPH_TIME: "graph replay"}.get(basis, "device-busy")
        found[f"{name} ({clock}, {role})"] = ratio
        loop = loop_ratio(r)
        if loop:  # every run's, so the spread over runs shows how far a loop's ratio moves
            found[f"{name} (wall in a loop, shown)"] = loop
    return found
