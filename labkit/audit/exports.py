"""Each export path on this input layout: the export audit (labkit.audit.export_audit, the
table chapter 07 shows) run on the learner's model, reduced to the layout audited, with the
outcomes on the other layouts beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from labkit.audit import export_audit

PATHS = export_audit.PATHS
# On a small CPU: script costs ~5 CPU-seconds on ResNet-50, ONNX ~20 and AOTInductor minutes.
CPU_DEFAULT = ("trace", "export")
SKIPPED = "skipped"


@dataclass(frozen=True)
class ExportRow:
    """One path: what it records, and the outcome on the audited layout and on the others."""

    path: str
    records: str
    on_this_layout: str  # correct | rejected | silently wrong | not checkable | skipped
    detail: str
    others: dict[str, str]
    checked_against: str = ""  # the eager reference (export_audit.reference_math), '' when not built
    # built with TF32 off (export_audit._row, review 2026-12-03h item 1); a record without the
    # field was built under the session's TF32 setting: its trace convolved in TF32
    built_tf32_off: bool = False


def layout_key(memory_format: torch.memory_format) -> str:
    """Chapter 07's name for the input layout the audit runs ('NCHW' or 'channels_last')."""
    return export_audit.CHANNELS_LAST if memory_format == torch.channels_last else export_audit.NCHW


def audit(model: nn.Module, example: torch.Tensor, memory_format: torch.memory_format,
          paths: tuple[str, ...]) -> list[ExportRow]:
    """Run the chosen paths; a path not chosen, or that does not build, is a row that says why."""
    key = layout_key(memory_format)
    rows = []
    ran = export_audit.run(model, example.contiguous(), paths=paths) if paths else None
    against = str(ran.reference) if ran is not None and ran.reference else ""
    for r in ran.rows if ran is not None else []:
        mine = r.outcomes[key]
        rows.append(ExportRow(r.path, r.records, mine.kind, mine.detail or r.note,
                              {lay: o.kind for lay, o in r.outcomes.items() if lay != key},
                              against if r.artifact is not None else "", r.artifact is not None))
    for left in (p for p in PATHS if p not in paths):
        rows.append(ExportRow(export_audit.PATH_NAMES[left], "not built", SKIPPED,
                              f"not asked for (--exports {left} runs it)", {}))
    return rows
