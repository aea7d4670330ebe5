"""Chapter 05's GPU paths after its re-cut through the session's door (issue 37), in one short
job: every method of `labkit/chapters/ch05_dataloader/lesson.py` the notebook calls, in the
notebook's order, on a GPU (the CPU run of the notebook cannot reach the GPU branches: the
knobs with pin_memory and the device prefetcher, C25 behind a queued kernel, pinning's cost,
C23's bandwidth, C13's probe, the device-to-host trap, the overlap with pinned batches).

Nothing is written to results/: `chapter.record` writes this machine's local results file
(the user cache dir), which the job reads back at the end to check that every key the H200
record holds for chapter 05 was recorded again with the same payload shape (a dict's keys, a
list's row keys), so results/nvidia-h200.json still shows after the re-cut. Each part in its
own try, so one failure still leaves the others' numbers.

    PYTHONPATH=. python3 benchmarks/gpu_05_recut.py --out DIR     # writes DIR/gpu_05_recut.json

About 3 minutes on an H200 host. What to look for: every part 'ok'; 'same_keys' true, that is
'missing' (keys the H200 record holds that this run did not record; pinning_cost and
call_return are retired keys no cell records) and 'dropped_fields' empty ('added_fields' are
issue 39's additions, such as knee.testable); C25, C23 and C13
with their verdicts (recorded: C25 confirmed on an idle stream, C23 refuted, C13 refuted).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import job_parts  # benchmarks/job_parts.py, beside this script

from labkit import session
from labkit.core import results

KEY = "05_dataloader"


def text(value: object) -> object:
    """A cell's output as JSON: strings and tables as text, lists item by item, figures named."""
    if isinstance(value, list):
        return [text(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if type(value).__name__ in ("StaticFigure", "Timeline"):
        return f"<{type(value).__name__}>"
    return str(value)


def part(record: dict, name: str, fn: Callable[[], object]) -> object:
    """A part of this job, its output kept as text (job_parts.part)."""
    return job_parts.part(record, name, fn, as_value=text)


def fields(payload: object) -> set[str]:
    """A payload's field names: a dict's keys, or the keys of a list's first row."""
    if isinstance(payload, list):
        payload = payload[0] if payload else {}
    return set(payload) if isinstance(payload, dict) else set()


# Keys the H200 record holds that no cell records any more (before this re-cut too).
RETIRED = {"pinning_cost", "call_return"}


def compare_keys(recorded_before: dict, recorded_now: dict) -> dict:
    """The H200 record's chapter-05 keys against this run's: a key or a field the record holds
    and this run did not write would leave the recorded run unshown (added fields are fine)."""
    before = {k: v["payload"] for k, v in recorded_before.items() if not k.startswith("verdict:")}
    now = {k: v["payload"] for k, v in recorded_now.items() if not k.startswith("verdict:")}
    dropped = {k: sorted(fields(before[k]) - fields(now[k]))
               for k in sorted(set(before) & set(now)) if fields(before[k]) - fields(now[k])}
    added = {k: sorted(fields(now[k]) - fields(before[k]))
             for k in sorted(set(before) & set(now)) if fields(now[k]) - fields(before[k])}
    missing = sorted(set(before) - set(now) - RETIRED - {"ran"})
    return {"missing": missing, "new": sorted(set(now) - set(before)), "dropped_fields": dropped,
            "added_fields": added, "same_keys": not missing and not dropped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    h200 = ((results.load(results.DEFAULT_REFERENCE) or {}).get("chapters", {}).get(KEY, {}))
    chapter = session.open(KEY)
    lesson = chapter.lab.lesson.Lesson(chapter)
    record: dict = {"on_gpu": chapter.on_gpu, "chapter": str(chapter)}
    steps: list[tuple[str, Callable[[], object]]] = [
        ("plan", lesson.plan_text),
        ("describe", lambda: lesson.describe(lesson.prepare())),
        ("worker_sweep", lesson.worker_sweep),
        ("plateau", lesson.plateau_text),
        ("knob_sweep", lesson.knob_sweep),
        ("recorded_gpu_knobs", lesson.recorded_gpu_knobs),
        ("cores", lesson.cores_text),
        ("c26", lambda: [lesson.c26_text(ev := chapter.lab.channels_last_probe.probe()),
                         chapter.judge("C26", ev, form=chapter.seed_form)]),
        ("quiz_c25_answer", lesson.when_pageable_returns),
        ("c25", lambda: lesson.c25(chapter.here_or_recorded("busy_stream", lesson.busy_returns))),
        ("takeaways", lesson.takeaways),
        ("startup", lesson.startup),
        ("quiz_startup_answer", lesson.which_first_batches_are_faster),
        ("pinning_cost", lesson.pinning_cost),
        ("dataloader_warnings", lesson.dataloader_warnings),
        ("dataloader_source", lesson.dataloader_source),
        ("quiz_c23_answer", lesson.pin_memory_device_gain),
        ("c23", lesson.c23),
        ("c13", lesson.c13),
        ("quiz_trap_answer", lesson.what_the_early_read_gives),
        ("d2h_trap", lesson.d2h_trap),
        ("overlap", lesson.overlap),
        ("verdicts", lambda: [str(v) for v in chapter.verdicts]),
    ]
    for name, fn in steps:
        part(record, name, fn)
    local = results._read(results.local_path()) or {}
    record["keys"] = compare_keys(h200, local.get("chapters", {}).get(KEY, {}))
    print("keys:", json.dumps(record["keys"], indent=1), flush=True)
    (args.out / "gpu_05_recut.json").write_text(json.dumps(record, indent=1, default=str))


if __name__ == "__main__":
    main()
