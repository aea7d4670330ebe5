"""Chapter 03's verdict-deciding measurement (C7), runnable outside the notebook.

`benchmarks/reproduce.py 03_memory_layouts --runs 3` calls `measure_verdicts` in fresh
processes. Like the notebook: ResNet-50 (random weights) in NCHW and channels_last, timed
interleaved through `Chapter.measured` (so the trust rule sees the flags); on a GPU the
seed's form (fp16, batch 64, 224x224) is judged, on a CPU float32 at env.sizes()'s batch and
image. C22 decides by bytes copied and kernel names, not by timings, so it is not repeated.
quick=True: a 64x64 image, batch 1, two rounds (a smoke test, not a measurement).
"""

from __future__ import annotations

import copy

import torch
from torch.utils.flop_counter import FlopCounterMode

from labkit import claims, session
from labkit.chapters.ch03_memory_layouts import cases, device_split
from labkit.chapters.ch03_memory_layouts.claims import WALL_TIME
from labkit.chapters.ch03_memory_layouts.claims import deciding as c7_deciding
from labkit.core import env
from labkit.models import resnet

KEY = "03_memory_layouts"
CLAIM_IDS = ("C7",)


def measure_verdicts(quick: bool = False) -> list[claims.Verdict]:
    """C7 measured and judged here, in the form the notebook judges on this machine."""
    chapter = session.open(KEY, announce=False)
    device, on_gpu = chapter.device, chapter.on_gpu
    dtype = torch.float16 if on_gpu else torch.float32
    image = 64 if quick else chapter.sizes.cnn_image
    batches = [1] if quick else ([64] if on_gpu else [1, chapter.sizes.cnn_batch])
    net = resnet.resnet50().eval().to(device, dtype)
    net_cl = copy.deepcopy(net).to(memory_format=torch.channels_last)
    runs, flagged_all = [], []
    for batch in batches:
        x = torch.randn(batch, 3, image, image, device=device, dtype=dtype)
        x_cl = x.to(memory_format=torch.channels_last)
        with torch.no_grad():
            with FlopCounterMode(display=False) as counter:
                net(x)
            math = cases.math_of(dtype, on_gpu)
            cmp, flagged = chapter.measured(
                {"NCHW": lambda x=x: net(x), "NHWC (channels_last)": lambda x_cl=x_cl: net_cl(x_cl)},
                baseline="NCHW", case=f"{str(dtype).replace('torch.', '')} b{batch}",
                rounds=2 if quick else (5 if on_gpu else 3), rep_ms=20 if quick else 400,
                flops=counter.get_total_flops(), flops_dtype=math)
        flagged_all += flagged
        nchw, nhwc = cmp["NCHW"], cmp["NHWC (channels_last)"]
        runs.append({"dtype": str(dtype).replace("torch.", ""), "batch": batch, "image": image,
                     "nchw_img_s": batch / nchw.timing.median_s,
                     "nhwc_img_s": batch / nhwc.timing.median_s,
                     "nhwc_time_ratio_iqr": [nhwc.ratio_q25, nhwc.ratio_q75]})
        if on_gpu:  # as the notebook: device-busy time beside wall time, for host-bound runs
            with torch.no_grad():
                runs[-1].update(device_split.evidence(lambda x=x: net(x), lambda x_cl=x_cl: net_cl(x_cl),
                                                      rounds=2 if quick else 3))
    stride1 = torch.empty(1, 3, 4, 4).to(memory_format=torch.channels_last).stride()[1]
    gpu_name = env.fingerprint().get("gpu_name", str(device)) if on_gpu else ""
    if on_gpu and not quick:  # the notebook's label: the seed's own setting only on an A100
        form = (claims.SEED_FORM if "A100" in gpu_name else
                f"analogue: {gpu_name} (the seed: A100), fp16, batch 64, {image}x{image}")
    else:
        form = (f"{chapter.analogue}: {str(dtype).replace('torch.', '')}, batch "
                f"{', '.join(map(str, batches))}, {image}x{image}")
    return [chapter.judge("C7", {"channels_last_stride1": stride1, "runs": runs,
                                 "flags": flagged_all, "device": str(device)}, form=form)]


def deciding_ratios(verdict: claims.Verdict) -> dict[str, float]:
    """The NHWC/NCHW speed ratio that decided, by run (device-busy where host-bound), and the
    wall-time ratio beside it."""
    found = {}
    for r in verdict.evidence["runs"]:
        ratio, _, basis = c7_deciding(r)
        name = f"{r['dtype']} b{r['batch']}"
        found[f"{name} ({'wall' if basis == WALL_TIME else 'device-busy'}, decides)"] = ratio
        if basis != WALL_TIME:
            found[f"{name} (wall, shown)"] = r["nhwc_img_s"] / r["nchw_img_s"]
    return found
