"""Where the tests find the repository's files, wherever the test module sits in the tree."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "results"
DATA = ROOT / "tests" / "data"
