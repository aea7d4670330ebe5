"""Chapter 09's export check on a GPU, before and after review 2026-12-03g items 4 and 5.

Item 4: the H200's ResNet-50 audit read "ONNX Runtime CPU, numpy feed: silently wrong, max
|error| 0.0472 against outputs up to 1.97": ONNX Runtime's float32 compared with eager run in
TF32 (PyTorch's default for cuDNN convolutions), at a 1e-2 tolerance. The audit now computes
the reference in strict float32 (export_audit.reference_math: TF32 off for the reference and
the paths run in this process, use_tf32=0 asked of ORT's CUDA provider). Item 5: torchvision's
ViT zero-initialises its head, so every check passed against outputs of 0; the audit's loader
now seeds a zero layer (models.seed_zero_layers) and an all-zero reference is "not checkable".

For ResNet-50 (torchvision where it imports, else labkit's) on the chapter's first 8 images at
224 px, channels_last being the audited layout, this job records:

- 'tf32_flags': PyTorch's TF32 settings as the chapter runs (the rule turns them off for the check);
- 'audit': the audit's outcome per path and layout, with max |error| and the reference it used;
- 'relative_error': for ONNX Runtime's numpy feed and torch.jit.trace on the NCHW input,
  max |error| / max |reference| against the TF32 reference (the old check) and against the
  strict float32 one (the new): the first should sit near 0.02 for ORT and the second near 1e-6.
- 'vit': torchvision's vit_b_16 as the audit loads it: the layers seeded and max |output|
  (> 0), and its audit's outcome kinds (none 'not checkable').

    PYTHONPATH=. python3 benchmarks/gpu_09_export_reference.py --out DIR   # DIR/gpu_09_export_reference.json

About 1-2 minutes on an H200 host (ONNX export of two networks). What to look for: every
'audit' NCHW outcome of ResNet-50 'correct' with the reference 'eager in strict float32 (TF32
off)'; only the IOBinding row wrong on channels_last (it binds an address and a shape, the
layout trap chapter 07 teaches); 'relative_error' old > 1e-2 > new for ORT; the ViT's
max |output| > 0. Review 2026-12-03h item 1: 'trace_allow_tf32' False for the audit's trace
(built with TF32 off) and True for the old build where TF32 was on for convolutions, whose
error against strict float32 eager should then sit near 0.02 (the H200 audit's 0.0489 / 1.95).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def _relative(got, want) -> float:
    return float((got.float() - want.float()).abs().max() / want.abs().max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of the job (no TF32)")
    parser.add_argument("--image", type=int, default=224)
    args = parser.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    import torch

    from labkit.audit import export_audit, models

    device, image = args.device, args.image
    if device == "cuda" and not torch.cuda.is_available():
        print("no CUDA GPU here: this job measures the GPU check", file=sys.stderr)
        return 2
    out: dict = {"torch": torch.__version__,
                 "device": torch.cuda.get_device_name(0) if device == "cuda" else device,
                 "tf32_flags": export_audit.tf32_flags()}
    started = time.perf_counter()
    spec = models.preferred("labkit:resnet50")
    model = models.calibrate_batchnorm(models.load(spec, image=image), image).to(device).eval()
    torch.manual_seed(0)
    x = torch.randn(8, 3, image, image, device=device)
    paths = ("trace", "export", "onnx", "onnx_pointer")
    with tempfile.TemporaryDirectory() as where:
        audit = export_audit.run(model, x, paths=paths, workdir=where)
        out["audit"] = {"model": spec, **audit.as_dict()}
        rows = {r.path: r for r in audit.rows}
        with torch.no_grad():
            tf32_ref = model(x)  # the old reference: the flags as they are
            with export_audit.strict_float32():
                strict_ref = model(x)
        errors = {}
        for path, row in rows.items():
            if row.artifact is None or not (path.startswith("ONNX Runtime") and "numpy" in path
                                             or path == "torch.jit.trace"):
                continue
            with torch.no_grad():
                got = row.artifact.run(x)
            errors[path] = {"against TF32 eager (old)": _relative(got, tf32_ref),
                            "against strict float32 eager (new)": _relative(got, strict_ref)}
        # review 2026-12-03h item 1: the audit's trace is now built with TF32 off; a trace made
        # under the flags as they are (the old build) keeps allow_tf32=1 in its graph
        with torch.no_grad():
            old_trace = torch.jit.trace(model, x)
            got = old_trace(x)
        errors["torch.jit.trace, traced under the flags as they are (old build)"] = {
            "against TF32 eager (old)": _relative(got, tf32_ref),
            "against strict float32 eager (new)": _relative(got, strict_ref)}
        trace_row = rows.get("torch.jit.trace")
        out["trace_allow_tf32"] = {
            "audit's trace": (export_audit.traced_allow_tf32(trace_row.artifact.run)
                              if trace_row is not None and trace_row.artifact is not None else None),
            "old build": export_audit.traced_allow_tf32(old_trace)}
        out["relative_error"] = errors
    out["resnet_s"] = time.perf_counter() - started
    print(json.dumps(out["relative_error"], indent=1))
    print(audit.structure())

    started = time.perf_counter()
    if models.has_torchvision():
        vit = models.load("torchvision:vit_b_16")
        import torchvision

        zero = torchvision.models.vit_b_16(weights=None)
        vit = vit.to(device).eval()
        y = torch.randn(8, 3, 224, 224, device=device)
        with torch.no_grad():
            scale = float(vit(y).abs().max())
            zero_scale = float(zero.to(device).eval()(y).abs().max())
        with tempfile.TemporaryDirectory() as where:
            vit_audit = export_audit.run(vit, y, paths=("trace", "export"), workdir=where)
        out["vit"] = {"max_output_as_loaded": scale, "max_output_torchvision_as_built": zero_scale,
                      "outcomes": {r.path: {k: o.kind for k, o in r.outcomes.items()} for r in vit_audit.rows},
                      "seconds": time.perf_counter() - started}
        print(json.dumps(out["vit"], indent=1))
    else:
        out["vit"] = "torchvision does not import here"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_09_export_reference.json").write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
