"""Hypothesis profiles, chosen with HYPOTHESIS_PROFILE (tests/conftest.py loads one):

- ci (the default, what `make test` runs): a quarter of each test's examples, derandomized,
  so the suite is fast and a red run replays the same examples on the next try;
- dev: each test's own example count, random;
- nightly: four times the examples, random: the long hunt for new counterexamples.

A test states its example count as `max_examples=examples(N)`: N is the count it was written
for (the dev profile), scaled here by the profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALE = {"ci": 0.25, "dev": 1.0, "nightly": 4.0}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in SCALE:
    raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r} is not one of {sorted(SCALE)}")

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("nightly", max_examples=400, deadline=None)


def load() -> None:
    settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """This test's example count under the loaded profile (at least 10)."""
    return max(10, round(count * SCALE[PROFILE]))
