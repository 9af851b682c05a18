"""Load a script of bench/ as a module, for the tests of what it computes."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


@contextmanager
def loaded_bench(script: str) -> Iterator[ModuleType]:
    """``bench/<script>.py`` imported as ``<script>_bench``, registered in ``sys.modules`` while the block runs
    (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(f"{script}_bench", BENCH_DIR / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)
