"""Make ``z0_memory.graphs/.nodes/.stores`` resolve to THIS checkout, not to the editable install's folders.

The editable install maps those three subpackages to the folders of the checkout it was installed from (its finder
runs after the normal path search, which cannot find them inside ``z0_memory/``). A second checkout (a git worktree)
running tests with the same virtualenv would otherwise test its own ``z0_memory`` with another checkout's nodes.
Imported by ``tests/conftest.py``; subprocesses the tests start (``langgraph dev``, the CLI) get it as their
``sitecustomize`` through ``PYTHONPATH`` (see :func:`subprocess_env`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBPACKAGES = ("graphs", "nodes", "stores")


class _CheckoutFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):  # noqa: ANN001, ANN206
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "z0_memory" or parts[1] not in SUBPACKAGES:
            return None
        folder = ROOT / parts[1] / Path(*parts[2:]) if len(parts) > 2 else ROOT / parts[1]
        if folder.is_dir() and (folder / "__init__.py").exists():
            return importlib.util.spec_from_file_location(
                fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])
        module = folder.with_suffix(".py")
        if module.exists():
            return importlib.util.spec_from_file_location(fullname, module)
        return None


def use_this_checkout() -> None:
    if (ROOT / "z0_memory" / "__init__.py").exists() and not any(isinstance(f, type) and f is _CheckoutFinder
                                                                 for f in sys.meta_path):
        sys.meta_path.insert(0, _CheckoutFinder)


def subprocess_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with PYTHONPATH making a child Python use this checkout too."""
    paths = [str(Path(__file__).parent), str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


use_this_checkout()
