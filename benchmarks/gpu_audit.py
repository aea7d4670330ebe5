"""Record chapter 09's audit of its three networks on the reference GPU (issue 29).

Runs the audit (labkit.audit) of ResNet-50, MobileNetV3 and a ViT
(torchvision's with random weights where torchvision imports, else labkit's built-ins) at
batch 64, 224x224, channels_last, on cuda, every export path, and records each summary
under chapter 09 in results/<machine>.json (LABKIT_RECORD_REFERENCE, default nvidia-h200),
where the chapter shows it on a CPU. Also writes each full report as Markdown and HTML to
OUTDIR (default $OUT or /tmp/out).

    LABKIT_RECORD_REFERENCE=nvidia-h200 python3 benchmarks/gpu_audit.py OUTDIR [NETWORK ...]

NETWORK picks some of resnet50, mobilenetv3, vit (default all three), so the three can be
recorded in separate calls where one call's time is limited (each takes 1-3 minutes, most
of it AOTInductor's compile; LABKIT_AOTI_TIMEOUT_S=0 skips that path).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import torch

from labkit.audit import audit, models, report
from labkit.core import results

CHAPTER = "09_audit_your_model"


def key_for(name: str) -> str:
    """The results key of one network: 'audit_resnet50', 'audit_mobilenetv3', 'audit_vit'."""
    return "audit_" + name.lower().replace("-", "").replace(" ", "_")


def main(outdir: Path, chosen: list[str]) -> int:
    """Audit the three networks; 1 when there is no GPU (nothing is recorded then)."""
    if not torch.cuda.is_available():
        print("gpu_audit: no CUDA GPU here; nothing recorded", file=sys.stderr)
        return 1
    os.environ.setdefault(results.REFERENCE_ENV, results.DEFAULT_REFERENCE)
    outdir.mkdir(parents=True, exist_ok=True)
    networks = [(n, s) for n, s in models.chapter_networks()
                if not chosen or key_for(n).removeprefix("audit_") in chosen]
    if not networks:
        print(f"gpu_audit: no network among {chosen}; choose from resnet50, mobilenetv3, vit",
              file=sys.stderr)
        return 2
    for name, spec in networks:
        model = models.load(spec, image=224)
        torch.manual_seed(0)
        example = torch.randn(64, 3, 224, 224)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = audit.run(model, example, device="cuda", memory_format="channels_last",
                               name=spec, recommend_rounds=10)
        key = key_for(name)
        results.record(CHAPTER, key, report.summary(result))
        (outdir / f"{key}.md").write_text(report.markdown(result))
        (outdir / f"{key}.html").write_text(report.to_html(result))
        print(report.text(result), flush=True)
        del model, result
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp/out")),
                  sys.argv[2:]))
