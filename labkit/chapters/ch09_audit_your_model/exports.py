"""Each export path on this input layout: chapter 07's export audit, run on the learner's model.

A named exception to the chapters' independence (pyproject.toml's import contract): the
export paths (trace, script, export, ONNX Runtime, AOTInductor) and their correctness check
live in chapter 07, and a copy of that code would drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from labkit.chapters.ch07_export_traps import export_audit

PATHS = export_audit.PATHS
CPU_DEFAULT = ("trace", "script", "export")  # ONNX costs ~20 s and AOTI minutes on a small CPU


@dataclass(frozen=True)
class ExportRow:
    """One path: what it records, and the outcome on the audited layout and on the others."""

    path: str
    records: str
    on_this_layout: str  # correct | rejected | silently wrong | skipped
    detail: str
    others: dict[str, str]


def layout_key(memory_format: torch.memory_format) -> str:
    """Chapter 07's name for the input layout the audit runs ('NCHW' or 'channels_last')."""
    return export_audit.CHANNELS_LAST if memory_format == torch.channels_last else export_audit.NCHW


def audit(model: nn.Module, example: torch.Tensor, memory_format: torch.memory_format,
          paths: tuple[str, ...]) -> list[ExportRow]:
    """Run the chosen paths; a path that does not build is a row that says why."""
    if not paths:
        return []
    result = export_audit.run(model, example.contiguous(), paths=paths)
    key = layout_key(memory_format)
    rows = []
    for r in result.rows:
        mine = r.outcomes[key]
        rows.append(ExportRow(r.path, r.records, mine.kind, mine.detail or r.note,
                              {lay: o.kind for lay, o in r.outcomes.items() if lay != key}))
    return rows
