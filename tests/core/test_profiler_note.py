"""labkit silences one torch.profiler note and nothing else (it printed on five GPU pages).

Checked in a fresh interpreter: pytest puts its own warning filters in front of a test's."""

import subprocess
import sys

from tests.paths import ROOT

PROBE = """
import warnings
import labkit
warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the "
              "current cycle will be reported.", UserWarning)
warnings.warn("a warning a learner should see", UserWarning)
"""


def test_the_profilers_cycle_note_is_silenced_and_other_warnings_are_not():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    assert "a warning a learner should see" in done.stderr
    assert "clears events" not in done.stderr
