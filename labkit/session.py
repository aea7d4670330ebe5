"""One chapter's session: the notebook's one door, so a notebook imports `session` and torch.

    from labkit import session
    chapter = session.open("02_contiguity_and_hidden_copies")   # prints where it runs
    chapter.rules()                                             # the trust rule, once
    chapter.device, chapter.sizes, chapter.on_gpu, chapter.analogue
    chapter.lab.strided_gemm, chapter.lab.copies                # its modules, the instruments
    chapter.claim("C2")                                         # the claim's card, before measuring
    v = chapter.judge("C2", evidence, form=chapter.form())      # kept for the chapter's table
    chapter.here_or_recorded("no_sync", measure)                # measured here, or the recorded run
    chapter.show(comparison)                                    # one table object (labkit.show.table)
    chapter.table([v]); chapter.save()                          # shown; saved with results

The chapter key (the notebook's name, `NN_name`) is the one identity a chapter has from its
notebook to the ledger: its results section, its claims and its exercises are found by it.
The session also holds the one policy for measuring a comparison again when the harness
flags it (`measured` around bench.compare, `retried` around a chapter module's own
comparison), so no notebook writes its own; what a flag still standing does to a verdict is
the claims' rule (`labkit.claims.trust`), applied by `Claim.judge`.

Why verbs and not globals: before the door, each notebook imported 6 to 13 labkit modules,
copied the session's fields into globals and wrote `if on_gpu: ... else: show_recorded(...)`
a hundred times over; a learner read that plumbing before every measurement. Now one call,
`here_or_recorded`, measures where the machine can and otherwise returns the reference run's
record wrapped so it can never be read as measured here (`Recorded`).
"""

from __future__ import annotations

import html
import importlib
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

from labkit import claims, exercises
from labkit.core import discovery, env, results
from labkit.measure import bench, sharing
from labkit.show import table as tables

# The shared instruments a notebook reaches as `chapter.lab.<name>` (a chapter's own module of
# the same name comes first). Imported on first use: a chapter that never profiles never
# imports the timeline.
INSTRUMENTS = {
    "bench": "labkit.measure.bench", "ceilings": "labkit.measure.ceilings",
    "copies": "labkit.measure.copies", "sharing": "labkit.measure.sharing",
    "conditions": "labkit.measure.conditions",
    "timeline": "labkit.measure.timeline", "timing": "labkit.measure.timing",
    "env": "labkit.core.env", "layout": "labkit.core.layout", "results": "labkit.core.results",
    "widgets": "labkit.show.widgets", "timing_plots": "labkit.show.timing_plots",
    "table": "labkit.show.table",
}
RULES_ANCHOR = claims.core.RULES_ANCHOR  # the id each claim card links back to


class Lab:
    """A chapter's experiment modules (`labkit/chapters/chNN_name/<part>.py`) and the shared
    instruments, by attribute: `chapter.lab.strided_gemm`, `chapter.lab.copies`."""

    def __init__(self, key: str) -> None:
        self._key = key

    def __getattr__(self, name: str) -> ModuleType:
        if name.startswith("_"):
            raise AttributeError(name)
        found = discovery.module(self._key, name)
        if found is None and name in INSTRUMENTS:
            found = importlib.import_module(INSTRUMENTS[name])
        if found is None:
            raise AttributeError(f"chapter {self._key} has no module {name!r} and labkit no "
                                 f"instrument of that name; instruments: {', '.join(INSTRUMENTS)}")
        return found

    def __dir__(self) -> list[str]:
        return sorted(INSTRUMENTS)


@dataclass(frozen=True, repr=False)
class Recorded:
    """A result the reference machine recorded, shown as recorded: never as measured here.

    value is the recorded payload (None when nothing is recorded: then it says so and is
    falsy); machine and date say where and when. Read it like the payload (`r["n"]`,
    `r.get("n")`); a payload that is a recorded table (`labkit.show.table`) shows as that
    table, labelled."""

    chapter: str
    key: str
    machine: str
    value: object = None
    date: str = ""

    measured_here = False

    @property
    def label(self) -> str:
        """'recorded on nvidia-h200, 2026-11-30', or what is missing."""
        if self.value is None:
            return (f"nothing recorded on {self.machine} under {self.chapter}/{self.key} "
                    f"(results/{self.machine}.json): not measured here either")
        return f"recorded on {self.machine}" + (f", {self.date}" if self.date else "")

    def __bool__(self) -> bool:
        return self.value is not None

    def __getitem__(self, name: str) -> object:
        if not isinstance(self.value, Mapping):
            raise KeyError(f"{self.label}: no field {name!r}")
        return self.value[name]

    def get(self, name: str, default: object = None) -> object:
        return self.value.get(name, default) if isinstance(self.value, Mapping) else default

    @property
    def table(self) -> tables.Table | None:
        """The recorded payload as a table (labelled recorded), or None if it is not one."""
        if tables.is_table(self.value):
            return tables.Table.from_dict(self.value, recorded=self.label)  # type: ignore[arg-type]
        return None

    def __str__(self) -> str:
        shown = self.table
        if shown is not None:
            return str(shown)
        return self.label if self.value is None else f"{self.label}: {self.value}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        shown = self.table
        if shown is not None:
            return shown._repr_html_()
        if self.value is None:
            return f"<div><i>{html.escape(self.label)}</i></div>"
        rows = (self.value.items() if isinstance(self.value, Mapping) else [("value", self.value)])
        return tables.Table(self.label, ["", "value"], [[str(k), v] for k, v in rows])._repr_html_()


@dataclass(frozen=True)
class Takeaways:
    """A chapter's conclusions, each built from what it measured, one per line."""

    lines: list[str]

    def __str__(self) -> str:
        return "\n".join(f"- {line}" for line in self.lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in self.lines) + "</ul>"


# The trust rule in one sentence (the whole rule, labkit.claims.TRUST_RULE, is folded under it).
GIST = ("a flagged timing holds a verdict back only if its uncertainty could carry the deciding "
        "ratio across the threshold; so does a GPU shared with other processes; bytes copied and "
        "errors raised decide alone.")


class Rules:
    """The trust rule, printed once near the top of a chapter; claim cards link back to it."""

    def __str__(self) -> str:
        return f"How a flagged timing may hold a verdict back (the trust rule): {claims.TRUST_RULE}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return (f"<div id='{RULES_ANCHOR}'><b>The trust rule</b> (claim cards link here): "
                f"{html.escape(GIST)}<details><summary>in full</summary>"
                f"{html.escape(claims.TRUST_RULE)}</details></div>")


def analogue_form(device: str, seed: str, detail: str = "") -> str:
    """The one style of a form judged away from the seed's setting: 'analogue: <device> (the
    seed: <the seed's setting>); <detail>' (review 2026-12-04m 03-04 item 10: 'the seed's form',
    'analogue: NVIDIA H200 (the seed: A100), fp16, ...' and 'the seed's contrast (ratio of gaps)',
    naming no device, on one page). Chapter 02's forms (`claims.analogue_form` there) read the same."""
    if not device or not seed:
        raise ValueError(f"an analogue form names the device and the seed's setting, got {device!r} and {seed!r}")
    return f"analogue: {device} (the seed: {seed})" + (f"; {detail}" if detail else "")


@dataclass
class Chapter:
    """A chapter being run: its key, where it runs, its problem sizes and its verdicts."""

    key: str
    device: torch.device
    sizes: env.ProblemSizes
    on_gpu: bool
    threads: int
    verdicts: list[claims.Verdict] = field(default_factory=list)
    shared_gpu_seen: bool = False  # a timing measured here ran while other processes used the GPU
    # names this run of the chapter in what save() writes, so the ledger tells a verdict of
    # this run from one an earlier run left behind by identity, not by how far apart in time
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def lab(self) -> Lab:
        """This chapter's experiment modules and the shared instruments (`Lab`)."""
        return Lab(self.key)

    @property
    def seed_form(self) -> str:
        """The form of a verdict measured in the seed's own setting (whatever the device)."""
        return claims.SEED_FORM

    def form(self, here: str = "", there: str = claims.SEED_FORM, seed: str = "") -> str:
        """The form a verdict judges: `there` (default the seed's own form) when measured on
        a GPU, else this machine's analogue with `here` appended ('float32'); given the seed's
        setting (`seed`, 'a GPU with cuBLAS'), in `analogue_form`'s one style."""
        if self.on_gpu:
            return there
        if seed:
            return self.analogue_form(seed, here)
        return f"{self.analogue}, {here}" if here else self.analogue

    def analogue_form(self, seed: str, detail: str = "", device: str = "") -> str:
        """A form measured away from the seed's setting, in the course's one style
        (`analogue_form`): 'analogue: <this device> (the seed: <seed>); <detail>'; `device`
        names another device whose record is judged (the reference GPU's, on a CPU)."""
        return analogue_form(device or self.device_name, seed, detail)

    def rules(self) -> Rules:
        """The trust rule, to print once per chapter (cards link back to it)."""
        return Rules()

    def claim(self, claim_id: str) -> claims.Claim:
        """A claim of the curriculum: its card shows the statement and what decides it."""
        return claims.get(claim_id)

    def exercise(self, exercise_id: str) -> exercises.Exercise:
        """One exercise by id ('02.contiguous_bytes')."""
        return exercises.get(exercise_id)

    def show(self, what: object, title: str = "", units: Mapping[str, str] | None = None,
             record: str = "") -> tables.Table:
        """What was measured as one table (`labkit.show.table`): a comparison, a list of
        dicts, or a table; `record` keeps it under that key, to be re-shown from results."""
        if isinstance(what, tables.Table):
            shown = what
        elif isinstance(what, bench.Comparison):
            shown = tables.comparison(what, title)
        elif isinstance(what, (list, tuple)):
            shown = tables.rows(what, title, units)
        else:
            raise TypeError(f"chapter.show takes a comparison, a list of dicts or a Table, "
                            f"got {type(what).__name__}")
        if record:
            self.record(record, shown.to_dict())
        return shown

    def here_or_recorded(self, key: str, measure: Callable[[], object], *,
                         can: bool | Callable[[], bool] | None = None,
                         machine: str = results.DEFAULT_REFERENCE) -> object:
        """Measure here when this machine can, else show what the reference machine recorded.

        can: whether this machine can measure it (default: it has a GPU), or a predicate.
        When it can, `measure()` runs, its result is recorded under `key` and returned as it
        is. When it cannot, the reference's record under `key` comes back as `Recorded`,
        labelled 'recorded on <machine>, <date>' (or saying nothing is recorded), never as
        a measurement of this machine. One call replaces `if on_gpu: ... else: recorded`.
        """
        if not callable(measure):
            raise TypeError(f"here_or_recorded({key!r}, measure): measure must be a function "
                            f"that measures, got {measure!r}")
        runs_here = self.on_gpu if can is None else bool(can() if callable(can) else can)
        if runs_here:
            value = measure()
            self.record(key, value.to_dict() if isinstance(value, tables.Table) else value)
            return value
        return self.reference(key, machine)

    def only_on(self, kind: str, measure: Callable[[], object]) -> object | None:
        """`measure()` where it means something, None elsewhere: kind 'cpu' (a question about
        this CPU's allocator, say) or 'gpu'. The claim's evidence then says None: not asked."""
        if kind not in ("cpu", "gpu"):
            raise ValueError(f"only_on takes 'cpu' or 'gpu', got {kind!r}")
        return measure() if (kind == "gpu") == self.on_gpu else None

    def remember(self, takeaways: Iterable[str]) -> Takeaways:
        """The chapter's 'What to remember' lines, shown as a list (HTML) or '- ' lines (text)."""
        return Takeaways([str(line) for line in takeaways])

    def reference(self, key: str, machine: str = results.DEFAULT_REFERENCE) -> Recorded:
        """What the reference machine recorded under this chapter and key, labelled recorded."""
        data = results.load(machine) or {}
        entry = data.get("chapters", {}).get(self.key, {}).get(key)
        if entry is None:
            return Recorded(self.key, key, machine)
        return Recorded(self.key, key, machine, entry["payload"],
                        str(entry.get("recorded_at", ""))[:10])

    @property
    def device_name(self) -> str:
        """This machine's device as a form names it: the GPU's name ('NVIDIA H200'), else the
        CPU's model and its threads ('AMD EPYC 7B13, 2 threads')."""
        found = env.fingerprint()
        if self.on_gpu:
            return str(found.get("gpu_name") or "a GPU")
        return f"{found.get('cpu_model') or 'this CPU'}, {self.threads} threads"

    @property
    def analogue(self) -> str:
        """The form a verdict judges when measured here rather than in the seed's setting."""
        # one style with the chapters' own forms ('analogue: NVIDIA H200 (the seed: A100)'),
        # naming the device, not its type (review 2026-12-03d item 12: 'GPU analogue: cuda')
        return f"analogue: {self.device_name}"

    def judge(self, claim_id: str, evidence: dict, form: str = claims.SEED_FORM) -> claims.Verdict:
        """The claim's verdict from this run's evidence, kept for the chapter's table and save."""
        if self.shared_gpu_seen and "shared_gpu" not in evidence:
            evidence = {**evidence, "shared_gpu": True}  # a timing of this run shared the GPU
        verdict = claims.get(claim_id).judge(evidence, form=form)
        self.verdicts = [v for v in self.verdicts if v.claim_id != claim_id] + [verdict]
        return verdict

    def keep(self, verdict: claims.Verdict) -> claims.Verdict:
        """Keep a verdict judged elsewhere (a helper that judges several claims at once)."""
        self.verdicts = [v for v in self.verdicts if v.claim_id != verdict.claim_id] + [verdict]
        return verdict

    def table(self, verdicts: Iterable[claims.Verdict] | None = None,
              pending: Iterable[str] = ()) -> claims.VerdictTable:
        """These verdicts beside the reference GPU's recorded ones; with none given, every
        verdict kept so far as the chapter's closing summary (outcomes; numbers folded)."""
        if verdicts is None:
            return claims.table(self.verdicts, pending=pending, summary=True)
        return claims.table(verdicts, pending=pending)

    def save(self) -> None:
        """Save the chapter's verdicts with their evidence, and that the chapter ran here."""
        claims.save(self.verdicts, self.key, run=self.run_id)
        results.record(self.key, "ran", {"machine": env.device_key(), "where": env.where(),
                                         claims.tables.RUN_KEY: self.run_id})

    def record(self, name: str, payload: object) -> Path:
        """Keep a measured result under this chapter (see labkit.core.results.record)."""
        return results.record(self.key, name, payload)

    def recorded(self, name: str, machine: str = results.DEFAULT_REFERENCE) -> object | None:
        """What the reference machine recorded under this chapter and name, or None."""
        return results.recorded(self.key, name, machine)

    def claims(self) -> list[claims.Claim]:
        """The claims this chapter tests."""
        return claims.for_chapter(self.key)

    def exercises(self) -> list[exercises.Exercise]:
        """This chapter's exercises, easiest first."""
        return exercises.for_chapter(self.key)

    def measured(self, variants: dict[str, Callable], baseline: str, case: str = "",
                 **options: object) -> tuple[bench.Comparison, list[dict]]:
        """bench.compare, measured once more if the harness flags a timing (noisy, above a
        ceiling, launch-bound); returns the comparison and the timings still flagged after
        the second try. The test suite's ci profile measures once (`env.measure_attempts`).

        Each flag is {'timing': 'case: label', 'why': ..., 'spread': ...}; it goes into a
        claim's evidence under `claims.trust.FLAGS_KEY` ("flags"), and the one trust rule
        (labkit.claims.trust, printed on every timing-based claim card, applied by
        Claim.judge) decides whether it can hold the verdict back.
        """
        return self.retried(lambda: bench.compare(variants, baseline=baseline, **options), case)

    def retried(self, measure: Callable[[], bench.Comparison],
                case: str = "") -> tuple[bench.Comparison, list[dict]]:
        """The one retry: `measure()` (a function that returns a Comparison, such as a chapter
        module's own interleaved comparison) called once more if the harness flags a timing;
        returns the last comparison and its flags, case-prefixed. `measured` is this around
        bench.compare; a notebook that measures through a chapter module calls this, and
        writes no retry of its own."""
        flagged: list[dict] = []
        attempts = env.measure_attempts()
        for attempt in range(attempts):
            comparison = measure()
            flagged = comparison.flags(case)
            if not flagged or attempt == attempts - 1:
                break
        self.shared_gpu_seen |= sharing.any_shared(comparison)
        return comparison, flagged

    def __str__(self) -> str:
        return (f"chapter {self.key}: torch {torch.__version__} on {self.device} ({env.where()}); "
                f"sizes: {self.sizes.as_dict()}")


def open(key: str, announce: bool = True) -> Chapter:  # noqa: A001 -- read as session.open(...)
    """Start a chapter: check its key, find the device and sizes, and say where it runs.

    In Colab it turns on the custom widget manager (env.enable_colab_widgets). It also quiets
    the profiler's C++ layer (kineto), whose start and stop lines on stderr say
    nothing a chapter reads (KINETO_LOG_LEVEL=6, unless the environment sets it already)."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    env.enable_colab_widgets()
    if discovery.check_key(key) not in discovery.chapter_keys():
        raise ValueError(f"no chapter {key!r}; known: {', '.join(discovery.chapter_keys())}")
    chapter = Chapter(key=key, device=env.device(), sizes=env.sizes(), on_gpu=env.has_cuda(),
                      threads=torch.get_num_threads())
    if announce:
        print(chapter)
    return chapter
