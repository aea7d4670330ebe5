"""The learners' Python environment (system mode): found, built, or refused with the fix."""

import os
import pathlib
import shutil
import sys
import tempfile

import pytest

pytestmark = pytest.mark.workshop

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workshop"))
OS_PYTHON = shutil.which("python3", path="/usr/bin:/usr/local/bin")


def test_blocked_at_names_the_folder_others_cannot_pass():
    import learner_env

    base = pathlib.Path(tempfile.mkdtemp(prefix="tll-env-test-", dir="/tmp"))
    try:
        base.chmod(0o755)
        private = base / "private"
        (private / "pkg").mkdir(parents=True)
        (private / "pkg" / "mod.py").write_text("x = 1\n")
        private.chmod(0o755)
        assert learner_env.blocked_at(private / "pkg" / "mod.py") is None
        private.chmod(0o700)
        assert learner_env.blocked_at(private / "pkg" / "mod.py") == str(private)
        assert learner_env.blocked_at(base / "missing") == str(base / "missing")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or OS_PYTHON is None,
                    reason="needs root (to run as nobody) and an OS Python")
def test_hard_links_make_private_packages_readable_to_an_unprivileged_user():
    """The fallback for a checkout in a private folder: nothing copied, readable through /opt."""
    import learner_env

    base = pathlib.Path(tempfile.mkdtemp(prefix="tll-env-test-", dir="/tmp"))
    try:
        base.chmod(0o755)
        private = base / "private"
        (private / "site").mkdir(parents=True)
        (private / "site" / "course_pkg.py").write_text("ANSWER = 42\n")
        private.chmod(0o700)
        code = f"import sys; sys.path.insert(0, {str(base / 'public' / 'site')!r}); " \
               "import course_pkg; print(course_pkg.ANSWER)"
        assert learner_env.run_as_nobody(OS_PYTHON, code).returncode != 0   # before: refused
        learner_env._place(private / "site", base / "public" / "site", "hardlink")
        done = learner_env.run_as_nobody(OS_PYTHON, code)
        assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr
        assert (base / "public" / "site" / "course_pkg.py").stat().st_ino == \
            (private / "site" / "course_pkg.py").stat().st_ino                  # linked, not copied
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_without_a_python_learners_can_run_the_hub_says_so_with_the_fix(monkeypatch, tmp_path):
    import learner_env

    monkeypatch.setattr(learner_env, "blocked_at", lambda path: "/root")
    monkeypatch.setattr(learner_env, "_base_candidates", lambda: [])
    with pytest.raises(learner_env.LearnerEnvError) as refused:
        learner_env.ensure(tmp_path / "opt")
    message = str(refused.value)
    assert "/root" in message and "Fix:" in message and "WORKSHOP_LEARNER_PYTHON" in message
    assert not (tmp_path / "opt").exists()
