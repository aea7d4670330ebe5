"""GPU self-check for chapters 01-03: what the CPU machine cannot test.

1. labkit.resnet against torchvision's ResNet-50: parameter count, state_dict names and
   shapes, and equal outputs once torchvision's weights are loaded into ours.
2. The Triton kernels of labkit.strided_kernels: correct on contiguous, transposed and
   stepped views, and the stride-aware kernel timed against copy-then-kernel.

Runs without pytest or Jupyter (the GPU machine has neither):

    python benchmarks/gpu_chapters.py --out "$OUT/gpu_chapters.json"

Exits non-zero when a check fails; the JSON holds every result either way.
"""

import argparse
import json
import sys
import traceback
from pathlib import Path

import torch

from labkit import bench, env, resnet
from labkit import strided_kernels as sk


def check_resnet() -> dict:
    try:
        from torchvision.models import resnet50
    except Exception as exc:  # report, do not crash: the other checks still run
        return {"ok": False, "skipped": f"torchvision does not import: {exc}"}
    torch.manual_seed(0)
    reference = resnet50(weights=None).eval()
    ours = resnet.resnet50().eval()
    same_names = {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in reference.state_dict().items()}
    ours.load_state_dict(reference.state_dict())
    device = env.device()
    x = torch.randn(4, 3, 224, 224, device=device)
    with torch.no_grad():
        a, b = ours.to(device)(x), reference.to(device)(x)
    max_diff = float((a - b).abs().max())
    result = {
        "ours_parameters": resnet.parameter_count(ours),
        "torchvision_parameters": resnet.parameter_count(reference),
        "expected_parameters": resnet.RESNET50_PARAMETERS,
        "same_state_dict_names_and_shapes": same_names,
        "output_shape": list(a.shape), "max_abs_difference": max_diff,
    }
    result["ok"] = (result["ours_parameters"] == result["torchvision_parameters"]
                    == resnet.RESNET50_PARAMETERS and same_names and max_diff < 1e-3
                    and list(a.shape) == [4, 1000])
    return result


def check_triton() -> dict:
    if not sk.triton_available():
        return {"ok": False, "skipped": "needs a CUDA GPU and triton"}
    base = torch.randn(1000, 700, device="cuda")
    views = {"contiguous": base, "transposed": base.t(), "stepped [::2, ::3]": base[::2, ::3],
             "transposed fp16": base.half().t()}
    correct = {}
    for name, view in views.items():
        out = torch.empty(view.shape, device="cuda", dtype=view.dtype)
        sk.triton_strided(view, out)
        expected = view.float() * 2 + 1
        ok_strided = torch.allclose(out.float(), expected, atol=1e-2, rtol=1e-3)
        out2 = torch.empty(view.shape, device="cuda", dtype=view.dtype)
        sk.triton_copy_then_kernel(view, out2)
        correct[name] = ok_strided and torch.allclose(out2.float(), expected, atol=1e-2, rtol=1e-3)
    side = 8192
    view = torch.randn(side, side, device="cuda").t()
    out = torch.empty(view.shape, device="cuda")
    kernel, variants = sk.paths(view, out)
    cmp = bench.compare(variants, baseline="stride-aware", rounds=5, rep_ms=300)
    timing = {label: {"median_s": v.timing.median_s, "iqr_s": v.timing.iqr_s, "ratio": v.ratio,
                      "gbps": sk.bytes_moved(view, "strided" if label == "stride-aware"
                                             else "copy_then_kernel") / v.timing.median_s / 1e9}
              for label, v in cmp.variants.items()}
    return {"ok": all(correct.values()), "kernel": kernel, "correct": correct, "side": side,
            "timing": timing}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu_chapters.json"))
    args = parser.parse_args()
    report = {"fingerprint": env.fingerprint()}
    for name, check in (("resnet", check_resnet), ("triton", check_triton)):
        try:
            report[name] = check()
        except Exception:  # keep going: one broken check must not hide the other's result
            report[name] = {"ok": False, "error": traceback.format_exc()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report, indent=1, default=str))
    return 0 if all(report[k].get("ok") for k in ("resnet", "triton")) else 1


if __name__ == "__main__":
    sys.exit(main())
