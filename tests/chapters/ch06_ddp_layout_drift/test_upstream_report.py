"""The upstream-ready report of the DDP finding (docs/ddp_layout_drift_issue.md) stays true to
what it cites: the script it shows is the repository's script, the warning and the
documentation it quotes are PyTorch's own words, and the reducer functions it names exist in the
installed torch's header."""

import re
from pathlib import Path

import pytest
import torch

from tests.paths import ROOT

REPORT = ROOT / "docs" / "ddp_layout_drift_issue.md"
SCRIPT = ROOT / "scripts" / "ddp_drift_repro.py"
TORCH = Path(torch.__file__).parent


def _blocks(language: str) -> list[str]:
    """The report's fenced blocks of one language ('' for plain), in order, each with its text."""
    found, current, lang = [], None, ""
    for line in REPORT.read_text(encoding="utf-8").splitlines(keepends=True):
        fence = line.strip()
        if fence.startswith("```") and current is None:
            current, lang = [], fence[3:]
        elif fence == "```" and current is not None:
            if lang == language:
                found.append("".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return found


def test_the_report_shows_the_repositorys_script_unchanged():
    assert _blocks("python")[0] == SCRIPT.read_text(encoding="utf-8")


def test_the_report_is_not_marked_filed_and_names_its_versions():
    text = REPORT.read_text(encoding="utf-8")
    assert "Not\nfiled anywhere" in text or "Not filed anywhere" in text
    assert re.search(r"torch \d+\.\d+\.\d+", text) and "gloo" in text and "Python 3." in text


def test_the_quoted_warning_is_the_reducers_text():
    warning = next(b for b in _blocks("") if "UserWarning" in b)
    assert "This is not an error, but may impair performance." in warning
    assert "the param's strides changed since DDP was constructed" in warning
    assert re.search(r"reducer\.cpp:\d+", warning)


def test_the_quoted_ddp_documentation_is_in_torch():
    source = (TORCH / "nn" / "parallel" / "distributed.py").read_text(encoding="utf-8")
    quoted = "You should never try to change your model's parameters after wrapping"
    assert quoted in REPORT.read_text(encoding="utf-8").replace("\n", " ").replace("`", "")
    assert quoted in " ".join(source.split())


def test_the_reducer_functions_it_names_exist_in_the_installed_header():
    header = TORCH / "include" / "torch" / "csrc" / "distributed" / "c10d" / "reducer.hpp"
    if not header.is_file():
        pytest.skip("this torch ships no c10d headers")
    text = header.read_text(encoding="utf-8")
    for name in ("initialize_bucket_views", "populate_bucket_views_out", "copy_bucket_to_grad",
                 "check_grad_layout", "bucket_views_in", "bucket_views_out"):
        assert name in text, name
        assert name in REPORT.read_text(encoding="utf-8"), name
