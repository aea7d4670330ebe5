"""The command: a report for a dotted path, files under --out, one clear line for bad input."""

import pytest

from labkit.audit import cli

SPEC = "tests.audit.handmade:build_model"
FAST = ["--batch", "2", "--image", "8", "--device", "cpu", "--exports", "trace", "--rounds", "1"]


def test_a_dotted_path_is_audited_and_written(tmp_path, capsys):
    assert cli.main([SPEC, *FAST, "--format", "contiguous", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Reorder" in out and "4 KiB -> 0 B" in out
    assert (tmp_path / "report.md").read_text().startswith("# Audit of " + SPEC)
    assert "<table>" in (tmp_path / "report.html").read_text()


def argv(spec: str, **override: str) -> list[str]:
    options = {"batch": "2", "image": "8", "device": "cpu", "exports": "trace", "rounds": "1",
               **override}
    return [spec, *(item for key, value in options.items() for item in (f"--{key}", value))]


@pytest.mark.parametrize("spec, override, message", [
    ("no_such_pkg.mod:build", {}, "does not import"),
    ("tests.audit.handmade:nothing", {}, "no callable 'nothing'"),
    ("resnet50", {}, "a model spec looks like"),
    (SPEC, {"channels": "4"}, "rejects an input of shape (2, 4, 8, 8)"),
    (SPEC, {"device": "cuda:9"}, "absent"),
    (SPEC, {"exports": "pdf"}, "unknown export paths"),
    (SPEC, {"batch": "0"}, "at least 1"),
])
def test_bad_input_exits_non_zero_with_one_clear_line(spec, override, message, capsys):
    assert cli.main(argv(spec, **override)) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.startswith("labkit.audit: ")
