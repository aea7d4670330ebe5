"""The chapters, the top floor: each folder `chNN_name/` is one chapter, found by walking here.

This package finds its own chapter folders and their modules (`claims`, `exercises`,
`reproduce`, ...) and installs that finder into `labkit.core.discovery`, which the
registries below ask. The import goes downward only: `labkit` imports this package, this
package imports its own sub-packages, and no lower layer names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from labkit.core import discovery


class _Folders:
    """The chapter folders under this package, and their modules by part name."""

    def packages(self) -> list[str]:
        return sorted(info.name for info in pkgutil.iter_modules(__path__)
                      if info.ispkg and discovery.FOLDER.fullmatch(info.name))

    def module(self, package: str, part: str) -> ModuleType | None:
        """The chapter's module `part`, or None where the chapter has none."""
        name = f"{__name__}.{package}.{part}"
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise  # the module exists and something it imports is missing: say so
            return None


discovery.install(_Folders())
