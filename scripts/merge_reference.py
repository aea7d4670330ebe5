"""Merge what one GPU call recorded into results/<machine>.json and results/h200_notebooks/.

A reference run is made in several device calls (one machine, a 10-minute limit each); each
call hands back its own copy of the results file. This takes, from each, the chapters that
call executed (its executed notebooks name them) and replaces those chapters here, so an
older chapter's entries never mix with a newer run of the same chapter.

    python scripts/merge_reference.py RUN_DIR [RUN_DIR ...]    # each holds nvidia-h200.json, notebooks/
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=pathlib.Path)
    parser.add_argument("--machine", default="nvidia-h200")
    parser.add_argument("--commit", default=None,
                        help="the commit the call ran on (default: HEAD now; commit, call, take, then commit more)")
    args = parser.parse_args()
    commit = args.commit or subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                           text=True, check=True).stdout.strip()
    sources_file = ROOT / "results" / "h200_notebooks" / "SOURCES.json"
    sources = json.loads(sources_file.read_text()) if sources_file.exists() else {}
    target = ROOT / "results" / f"{args.machine}.json"
    merged = json.loads(target.read_text()) if target.exists() else {"machine": args.machine, "chapters": {}}
    for run in args.runs:
        data = json.loads((run / f"{args.machine}.json").read_text())
        executed = sorted(p.stem for p in (run / "notebooks").glob("*.ipynb"))
        for chapter in executed:
            if chapter in data.get("chapters", {}):
                merged["chapters"][chapter] = data["chapters"][chapter]
                print(f"{run}: {chapter} ({len(data['chapters'][chapter])} entries)")
            else:
                print(f"{run}: {chapter} recorded nothing", file=sys.stderr)
            notebook = run / "notebooks" / f"{chapter}.ipynb"
            shutil.copy(notebook, ROOT / "results" / "h200_notebooks" / notebook.name)
            sources[chapter] = commit  # what tests/notebooks/test_h200_copies.py checks the chapter against
        merged["fingerprint"] = data.get("fingerprint", merged.get("fingerprint", {}))
        merged["updated_at"] = max(merged.get("updated_at", ""), data.get("updated_at", ""))
    target.write_text(json.dumps(merged, indent=1) + "\n")
    sources_file.write_text(json.dumps(sources, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
