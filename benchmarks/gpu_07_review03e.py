"""Chapter 07's new evidence on a GPU, before the re-record (review 2026-12-03e items 9 and 10).

Since that review C15a is judged in both of the statement's cases: traced with the seed's kind
of example, a non-contiguous x.transpose(2, 3) of square images (the seed's own expression has
W channels), beside the contiguous NCHW example; and C15b is measured on the chapter's own
engine bound by address and shape, ONNX Runtime's IOBinding (the reverse trap: it reads the
contiguous input right and channels_last as if it were NCHW). Both were written and tested on
a CPU. This job runs them at the chapter's GPU sizes on the example's GPU, judges C15a and
C15b as the notebook does, and times each part, so the re-record holds no surprise:

    PYTHONPATH=. python3 benchmarks/gpu_07_review03e.py --out DIR   # writes DIR/gpu_07_review03e.json

About 20 s on an H200 (two traces, one ONNX export, no AOTInductor). What to look for:
'noncontiguous trace' has stride [12288, 4096, 1, 64] and 'correct' on all three layouts (if
any reads 'silently wrong' or 'rejected', C15a turns 'confirmed': read its reason); 'pointer
binding' is correct on NCHW and 'silently wrong' on channels_last and the transposed view (the
audit the H200 recorded on 2026-12-03 says so); 'verdicts' C15a refuted with the form 'both
cases', C15b refuted with 'the trap runs the other way' in its reason; 'missing' names
onnxruntime-gpu (the H200's onnxruntime has no CUDA provider).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import job_parts  # benchmarks/job_parts.py, beside this script
import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/out")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from labkit import claims
    from labkit.audit import export_audit
    from labkit.chapters.ch07_export_traps import claims as ch07
    from labkit.chapters.ch07_export_traps import export_traps, tables

    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda:0" if on_gpu else "cpu")
    frozen = tables.setup(device, on_gpu)  # the chapter's sizes for this machine
    record: dict = {"device": str(device), "torch": torch.__version__, "on_gpu": on_gpu,
                    "example_shape": list(frozen.example.shape)}
    form = job_parts.part(record, "noncontiguous trace",
                          lambda: export_traps.trace_noncontiguous_example(frozen.model, frozen.example))
    audit = job_parts.part(record, "audit: trace and IOBinding",
                           lambda: export_audit.run(frozen.model, frozen.example, paths=("trace", "onnx_pointer"),
                                                    workdir=frozen.onnx_path.parent),
                           as_value=lambda a: a.as_dict())
    binding = job_parts.part(record, "pointer binding", lambda: tables.pointer_binding(audit))
    job_parts.part(record, "missing", lambda: tables.missing_cuda_provider())

    def verdicts() -> dict:
        row = audit.row("torch.jit.trace")
        with export_audit._quiet():
            traced = torch.jit.trace(export_traps.ContiguousThenView(image=int(frozen.example.shape[-1]))
                                     .to(device).eval(), frozen.example)
        evidence = {"trace_records_strides": row.artifact.recorded_stride == tuple(frozen.example.stride()),
                    "trace_keeps_contiguous": "contiguous" in export_traps.traced_ops(traced),
                    "trace_outcomes": {k: o.kind for k, o in row.outcomes.items()},
                    "trace_noncontiguous_example": form, "pointer_binding": binding,
                    "tensorrt_ran": False, "tensorrt_skipped_because": "not run in this job",
                    "tensorrt_fallback_devices": [], "tensorrt_outcomes": {}, "tensorrt_transposed_ratio": None,
                    "device": str(device), "torch": torch.__version__}
        judged = {}
        for claim_id in ("C15a", "C15b"):
            verdict = claims.get(claim_id).judge(evidence, machine="job", form=ch07.form_of(claim_id, evidence))
            judged[claim_id] = {"label": verdict.label, "form": verdict.form, "reason": verdict.reason}
        return judged

    job_parts.part(record, "verdicts", verdicts)
    (args.out / "gpu_07_review03e.json").write_text(json.dumps(record, indent=1, default=str))
    return 0 if all(v.get("ok", True) for v in record.values() if isinstance(v, dict)) else 1


if __name__ == "__main__":
    sys.exit(main())
