"""Where the tests find the repository's files, wherever the test module sits in the tree."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "results"
DATA = ROOT / "tests" / "data"


def load_script(path: Path, name: str) -> ModuleType:
    """A script under scripts/ or benchmarks/ imported as a module for its tests (they are not
    packages); it is registered in sys.modules first, where a dataclass looks its module up."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
