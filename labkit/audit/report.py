"""The audit report as sections of rows, written three ways: a text table, Markdown, HTML.

Sections are built once (`sections`) so the three forms cannot disagree. `structure`
keeps only what holds on every machine for a given torch build (names, layouts, bytes,
verdict kinds), for a notebook cell nbval checks; timings appear only in the full forms.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import asdict

from labkit.audit import kernels, recommend
from labkit.audit.audit import Report
from labkit.audit.module_layouts import human_bytes

Section = tuple[str, list[str], list[list[str]]]  # title, header, rows


def _ms(value: float | None, spread: float | None) -> str:
    return "-" if value is None else f"{value:.2f} ms (IQR {spread:.2f})"


def sections(report: Report, all_modules: bool = False) -> list[Section]:
    """The report's sections; modules without a finding are left out unless all_modules."""
    out: list[Section] = []
    counts: dict[str, int] = {}
    for r in report.modules[1:]:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    out.append(("Summary", ["what", "found"], [
        ["model", report.model], ["input", f"{report.input_shape} {report.dtype} on {report.device}, "
                                           f"{report.memory_format}"],
        ["module calls", f"{len(report.modules) - 1}: " + ", ".join(
            f"{k} {v}" for k, v in sorted(counts.items()))],
        ["layout drops", str(len(report.drops))],
        ["bytes copied in one forward", f"{human_bytes(report.copy_bytes)} in {len(report.copies)} modules"],
        ["drift-prone parameters (DDP)", f"{len(report.drift_prone)}; "
                                         f"{len(report.harmless)} size-1 cases warn harmlessly"],
    ]))
    rows = [r for r in report.modules if all_modules or r.finding]
    out.append(("Modules" + ("" if all_modules else " with a finding"),
                ["module", "kind", "in", "out", "channels_last", "bytes copied", "copy ops"],
                [[r.name, r.kind, r.input_format, r.output_format, r.verdict, human_bytes(r.copy_bytes),
                  ", ".join(r.copy_ops)] for r in rows]))
    k = report.kernels
    if k is not None:
        title = (f"Copy and layout work the profiler saw ({k.device}, share of {k.share_of}; "
                 f"all together {100 * k.copy_share:.1f}%"
                 + (f"; {k.bound_text()}" if k.bound_text() else "") + ")")
        out.append((title, ["name", "calls", "time", "share"],
                    [[r.name, str(r.calls), f"{r.total_us:.1f} us", f"{100 * r.share:.1f}%"]
                     for r in k.rows]))
    params = report.parameters if all_modules else report.drift_prone
    rows_p = [[p.name, str(p.shape), str(p.contiguous_stride), str(p.channels_last_stride),
               p.status] for p in params]
    if not all_modules and report.harmless:
        rows_p.append([f"({len(report.harmless)} more: size-1 dims only, in the Markdown/HTML)",
                       "", "", "", "warn harmlessly"])
    out.append(("Parameters and DDP's layout contract", ["parameter", "shape", "contiguous",
                                                         "channels_last", "status"], rows_p))
    out.append(("Export paths on this layout", ["path", "records", report.memory_format, "detail",
                                                "other layouts"],
                [[e.path, e.records, e.on_this_layout, e.detail,
                  ", ".join(f"{k}: {v}" for k, v in e.others.items())] for e in report.exports]))
    # the input the timed decisions belong to, in the heading, since the why column is cut on a
    # terminal (review 2026-12-05u item 2: a decision at 64 px and one at 112 px disagreed unsaid)
    decided = (f"; timed decisions for input {tuple(report.input_shape)}"
               if any(r.timed for r in report.recommendations) else "")
    out.append((f"Recommendations (measured; {recommend.rule()}{decided})",
                ["recommendation", "kept", "why", "original", "variant", "copies (orig -> variant)"],
                [[r.title, "yes" if r.kept else "no", r.why + "".join(f"; {d}" for d in r.details),
                  _ms(r.original_ms, r.original_iqr_ms), _ms(r.variant_ms, r.variant_iqr_ms),
                  "-" if r.copy_bytes is None else
                  f"{human_bytes(r.copy_bytes[0])} -> {human_bytes(r.copy_bytes[1])}"]
                 for r in report.recommendations]))
    if report.notes:
        out.append(("Notes", ["note"], [[n] for n in report.notes]))
    return out


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def precision(dtype: str, tf32: Mapping | None, device: str) -> str:
    """The precision the audit ran in, always said: the dtype, and on a GPU whether float32 ran
    in TF32 (review 2026-12-03e item 6); a recorded GPU summary from before the field existed
    says it was not recorded."""
    if tf32 is None:
        return dtype + ("; TF32 not recorded" if device.startswith("cuda") and dtype == "float32" else "")
    if dtype != "float32":
        return dtype
    on = [k for k, v in tf32.items() if v]
    return f"{dtype}, TF32 " + (f"on for {' and '.join(on)}" if on else "off")


def text(report: Report, width: int = 60) -> str:
    """A plain-text table per section (cells clipped to `width` characters)."""
    lines = [f"Audit of {report.model} (torch {report.torch_version}; "
             f"{precision(report.dtype, report.tf32, report.device)})"]
    if report.seconds.get("total") is not None:  # every phase (chapter 09's table names the largest)
        lines.append(f"audit took {report.seconds['total']:.1f} s (" + ", ".join(
            f"{k} {v:.1f} s" for k, v in report.seconds.items() if k != "total") + ")")
    for title, head, rows in sections(report):
        lines += ["", title]
        if not rows:
            lines.append("  (none)")
            continue
        cells = [[_clip(c, width) for c in row] for row in [head, *rows]]
        widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
        for n, row in enumerate(cells):
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown(report: Report) -> str:
    """GitHub-flavoured Markdown: one table per section, every module listed."""
    def cell(c: str) -> str:
        return c.replace("|", "\\|").replace("\n", " ")
    parts = [f"# Audit of {report.model}", "",
             f"torch {report.torch_version}; audit took {report.seconds.get('total', 0):.1f} s ("
             + ", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items() if k != "total") + ")"]
    for title, head, rows in sections(report, all_modules=True):
        parts += ["", f"## {title}", ""]
        if not rows:
            parts.append("(none)")
            continue
        parts.append("| " + " | ".join(head) + " |")
        parts.append("|" + "---|" * len(head))
        parts += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(parts) + "\n"


def to_html(report: Report) -> str:
    """A standalone HTML page, every module listed."""
    body = [f"<h1>Audit of {html.escape(report.model)}</h1>"]
    for title, head, rows in sections(report, all_modules=True):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if not rows:
            body.append("<p>(none)</p>")
            continue
        body.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
                    + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                              for row in rows) + "</table>")
    style = ("<style>body{font-family:sans-serif}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Audit of "
            f"{html.escape(report.model)}</title>{style}</head><body>{''.join(body)}</body></html>\n")


def structure(report: Report) -> str:
    """Machine-independent lines: findings by name, parameter counts, export outcomes' kinds."""
    lines = [f"{report.model}: input {report.input_shape}, {report.memory_format}"]
    for kind, names in report.findings().items():
        shown = ", ".join(names[:4]) + (f", ... ({len(names)} in all)" if len(names) > 4 else "")
        lines.append(f"  {kind}: {shown or 'none'}")
    lines.append(f"  bytes copied in one forward: {report.copy_bytes}")
    lines.append(f"  size-1 parameters that warn harmlessly: {len(report.harmless)}")
    return "\n".join(lines)


def as_dict(report: Report) -> dict:
    """Plain values (JSON-ready) for results files."""
    data = asdict(report)
    return data


def summary(report: Report) -> dict:
    """A compact, JSON-ready record: findings, copy kernels, exports, measured recommendations.

    What the notebook records and what a CPU run shows, labelled, from the reference GPU.
    """
    k = report.kernels
    return {
        "model": report.model, "device": report.device, "memory_format": report.memory_format,
        "input_shape": list(report.input_shape), "dtype": report.dtype, "torch": report.torch_version,
        "tf32": report.tf32,
        "findings": report.findings(), "copy_bytes": report.copy_bytes,
        # what each module a finding names is, so a page can say more than its bare name
        # (a Sequential's child '1', or '(model)' for the model itself)
        "module_kinds": {r.name: r.kind for r in (*report.drops, *report.copies)},
        "harmless_parameters": len(report.harmless),
        "kernels": None if k is None else {
            "device": k.device, "copy_share": k.copy_share, "share_of": k.share_of,
            "gpu_idle_share": k.gpu_idle_share, "host_bound": k.host_bound,
            # how the idle was measured (review 2026-12-03h item 3): a record without it read
            # one profiled pass with the host traced (kernels.bound_text says so)
            "idle_rule": kernels.IDLE_RULE if k.device == "gpu" else None,
            "profiled_idle_share": k.profiled_idle_share,
            "wall_ms": None if k.wall_s is None else 1e3 * k.wall_s,
            "wall_timing": kernels.WALL_TIMING if k.wall_s is not None else None,
            # each round, in order: a slow first round shows a GPU still coming up to speed
            # (review 2026-12-04m 08-09-99 item 10)
            "wall_rounds_ms": None if k.wall_rounds_s is None else [1e3 * w for w in k.wall_rounds_s],
            "device_ms": None if k.device_s is None else 1e3 * k.device_s,
            # the host's side beside it (review 2026-12-04j item 2): launches x us per launch
            "launches": k.launches, "pace_us": None if k.pace_us is None else list(k.pace_us),
            "rows": [asdict(r) for r in k.rows[:8]]},
        "exports": [{"path": e.path, "outcome": e.on_this_layout, "others": e.others,
                     "checked_against": e.checked_against, "built_tf32_off": e.built_tf32_off}
                    for e in report.exports],
        "recommendations": [{"title": r.title, "kept": r.kept, "why": r.why, "ratio": r.ratio,
                             "ratio_q25": r.ratio_q25, "ratio_q75": r.ratio_q75,
                             "original_ms": r.original_ms, "variant_ms": r.variant_ms,
                             "clock": r.clock, "outcome": r.outcome,
                             "noisy": r.timed and recommend.noisy(r.ratio, r.ratio_q25, r.ratio_q75),
                             "wall_ratio": r.wall_ratio,
                             "wall_q25": r.wall_q25, "wall_q75": r.wall_q75,
                             "wall_clock": r.wall_clock, "wall_faster": r.wall_faster,
                             "max_error": r.max_error, "output_scale": r.output_scale,
                             "timing_of": r.timing_of, "convolutions": list(r.convolutions),
                             "launches": None if r.launches is None else list(r.launches),
                             # device-busy time beside the stream's clock (review 2026-12-05t item 9)
                             "busy_ratio": r.busy_ratio, "busy_q25": r.busy_q25, "busy_q75": r.busy_q75,
                             "busy_unavailable": r.busy_unavailable}
                            for r in report.recommendations],
        "seconds": report.seconds,
    }


def summary_text(data: dict) -> str:
    """A few lines from a summary() dict (a recorded one included)."""
    lines = [f"{data['model']}: {tuple(data['input_shape'])} on {data['device']}, "
             f"{data['memory_format']} (torch {data['torch']})"]
    for kind, names in data["findings"].items():
        lines.append(f"  {kind}: {len(names)}" + (f" ({', '.join(names[:3])}"
                                                   f"{', ...' if len(names) > 3 else ''})" if names else ""))
    k = data.get("kernels")
    if k:
        bound = f"; {kernels.bound_text(k)}" if kernels.bound_text(k) else ""
        lines.append(f"  copies/layout work: {100 * k['copy_share']:.1f}% of {k['share_of']}{bound}")
        for r in k["rows"][:4]:
            lines.append(f"    {r['name'][:70]}: {r['calls']} calls, {100 * r['share']:.1f}%")
    for e in data["exports"]:
        lines.append(f"  export {e['path']}: {e['outcome']}")
    for r in data["recommendations"]:
        lines.append(f"  {'KEPT' if r['kept'] else 'not kept'}: {r['title']}: {recommend.clock_name(r['why'])}")
    return "\n".join(lines)
