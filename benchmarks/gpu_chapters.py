"""GPU self-check for chapters 01-03: what the CPU machine cannot test.

1. labkit.models.resnet against torchvision's ResNet-50: parameter count, state_dict names and
   shapes, and equal outputs once torchvision's weights are loaded into ours.
2. The Triton kernels of labkit.chapters.ch02_contiguity_and_hidden_copies.strided_kernels: correct on contiguous, transposed and
   stepped views, and the stride-aware kernel timed against copy-then-kernel.
3. Claim C10 as the seed states it: labkit.chapters.ch02_contiguity_and_hidden_copies.strided_gemm's Triton GEMM that takes strides,
   on A.t() @ B, against torch.matmul on the same transposed view and against
   .contiguous() then torch.matmul, at 1024 and 4096, in fp16 and fp32, with the bytes
   torch.matmul copies (copy detector, the caching allocator's internal bytes, and the
   profiler's nested copy ops). Chapter 02 makes the same comparison and judges it.

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

from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_gemm as sg
from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_kernels as sk
from labkit.core import env
from labkit.measure import bench, copies
from labkit.models import resnet


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


def check_strided_gemm() -> dict:
    """Claim C10 on the GPU: correctness on transposed and stepped views, then the timings."""
    if not sk.triton_available():
        return {"ok": False, "skipped": "needs a CUDA GPU and triton"}
    correct = {}
    for dtype in (torch.float16, torch.float32):
        for name, make in (("transposed", lambda t: t.t()), ("stepped", lambda t: t[::2, 1::3]),
                           ("odd sizes", lambda t: t[:999, :517])):
            a = make(torch.randn(1200, 1200, device="cuda", dtype=dtype))
            b = torch.randn(a.shape[1], 333, device="cuda", dtype=dtype)
            got, want = sg.matmul(a, b).float(), (a.double() @ b.double()).float()
            tol = 2e-2 * float(want.abs().max()) if dtype == torch.float16 else 1e-3 * float(want.abs().max())
            correct[f"{name} {dtype}"] = float((got - want).abs().max()) <= tol
    cases = {}
    for n in (1024, 4096):
        for dtype in (torch.float16, torch.float32):
            a_view = torch.randn(n, n, device="cuda", dtype=dtype).t()
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            variants = sg.paths(a_view, b)
            with copies.detect() as log:
                variants["torch.matmul on the view"]()
            cmp = bench.compare(variants, baseline="stride-aware GEMM on the view", rounds=5,
                                rep_ms=200, flops=2 * n**3, flops_dtype=dtype)
            cases[f"{n} {str(dtype).replace('torch.', '')}"] = {
                "matmul_view_copy_bytes": log.total_bytes,
                "matmul_view_internal_bytes": sum(e.internal_bytes or 0 for e in log.events
                                                  if getattr(e, "internal_bytes", None)),
                "copies_inside": sg.copies_inside(variants["torch.matmul on the view"]),
                "timing": {label: {"median_s": v.timing.median_s, "iqr_s": v.timing.iqr_s,
                                   "ratio_to_stride_aware": v.ratio, "tflops": v.timing.tflops,
                                   "pct_of_matmul_ceiling": v.timing.pct_of_matmul_ceiling,
                                   "noisy": v.timing.noisy}
                           for label, v in cmp.variants.items()}}
    return {"ok": all(correct.values()), "correct": correct, "cases": cases}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="write gpu_chapters.json here")
    parser.add_argument("--out", type=Path, default=Path("gpu_chapters.json"))
    args = parser.parse_args()
    if args.folder is not None:  # the form gpu_session.sh uses for every probe
        args.out = args.folder / "gpu_chapters.json"
    report = {"fingerprint": env.fingerprint()}
    checks = (("resnet", check_resnet), ("triton", check_triton), ("strided_gemm", check_strided_gemm))
    for name, check in checks:
        try:
            report[name] = check()
        except Exception:  # keep going: one broken check must not hide the other's result
            report[name] = {"ok": False, "error": traceback.format_exc()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report, indent=1, default=str))
    return 0 if all(report[name].get("ok") for name, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
