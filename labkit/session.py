"""One chapter's session: what every notebook needs before its first measurement, in one place.

    from labkit import session
    chapter = session.open("02_contiguity_and_hidden_copies")   # prints where it runs
    chapter.device, chapter.sizes, chapter.on_gpu, chapter.analogue
    v = chapter.judge("C2", evidence, form=chapter.analogue)    # kept for the chapter's table
    chapter.table([v]); chapter.save()                          # shown; saved with results

The chapter key (the notebook's name, `NN_name`) is the one identity a chapter has from its
notebook to the ledger: its results section, its claims and its exercises are found by it.
The session also holds the one policy for measuring a comparison again when the harness
flags it (`measured` around bench.compare, `retried` around a chapter module's own
comparison), so no notebook writes its own; what a flag still standing does to a verdict is
the claims' rule (`labkit.claims.trust`), applied by `Claim.judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from labkit import claims, exercises
from labkit.core import discovery, env, results
from labkit.measure import bench, sharing


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

    @property
    def analogue(self) -> str:
        """The form a verdict judges when measured here rather than in the seed's setting."""
        if self.on_gpu:
            return f"GPU analogue: {self.device.type}"
        return f"CPU analogue: {self.device.type}, {self.threads} threads"

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
        """These verdicts (default: all kept so far) beside the reference GPU's recorded ones."""
        return claims.table(self.verdicts if verdicts is None else verdicts, pending=pending)

    def save(self) -> None:
        """Save the chapter's verdicts with their evidence, and that the chapter ran here."""
        claims.save(self.verdicts, self.key)
        results.record(self.key, "ran", {"machine": env.device_key(), "where": env.where()})

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
    """Start a chapter: check its key, find the device and sizes, and say where it runs."""
    if discovery.check_key(key) not in discovery.chapter_keys():
        raise ValueError(f"no chapter {key!r}; known: {', '.join(discovery.chapter_keys())}")
    chapter = Chapter(key=key, device=env.device(), sizes=env.sizes(), on_gpu=env.has_cuda(),
                      threads=torch.get_num_threads())
    if announce:
        print(chapter)
    return chapter
