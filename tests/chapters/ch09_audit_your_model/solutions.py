"""Chapter 09's exercises solved (RIGHT), and the plausible wrong answers (WRONG) that
tests/exercises/test_every_exercise.py grades. The drift solution is the audit's own
function: passing shows the audit agrees with torch on where elements land."""

import torch

from labkit.audit import ddp_contract


def layout(t: torch.Tensor) -> str:
    nchw = t.is_contiguous()
    nhwc = t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
    if nchw and nhwc:
        return "both"
    return "contiguous" if nchw else "channels_last" if nhwc else "neither"


RIGHT = {"09.layout_of": layout, "09.drift_status": ddp_contract.status}
WRONG = {"09.layout_of": [lambda t: "contiguous" if t.is_contiguous() else "channels_last"],
         "09.drift_status": [lambda shape: None,
                             lambda shape: "drift-prone" if len(shape) == 4 and shape[1] > 1 else None]}
