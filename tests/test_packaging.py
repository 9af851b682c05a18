"""The built wheel installs everything under the ``z0_memory`` namespace and works outside the source tree.

The repository keeps the design card's top-level ``graphs/``, ``nodes/`` and ``stores/`` folders; pyproject maps
them to ``z0_memory.graphs`` etc. This test builds the real wheel, installs it into a fresh venv that borrows only
the current venv's dependencies, and checks the installed layout from that venv's own interpreter.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Source folder -> the package name it installs as (pyproject's [tool.setuptools] package-dir).
SOURCE_PACKAGES = {"z0_memory": "z0_memory", "graphs": "z0_memory.graphs", "nodes": "z0_memory.nodes", "stores": "z0_memory.stores"}

PROBE = r"""
import importlib.util, json, sys, sysconfig
import z0_memory, z0_memory.graphs, z0_memory.nodes, z0_memory.stores, z0_memory.stores.facts
mods = {m.__name__: m.__file__ for m in (z0_memory, z0_memory.graphs, z0_memory.nodes, z0_memory.stores,
                                           z0_memory.stores.facts)}
print(json.dumps({
    "files": mods,
    "prefix": sys.prefix,
    "purelib": sysconfig.get_paths()["purelib"],
    "top_level_importable": {n: importlib.util.find_spec(n) is not None for n in ("graphs", "nodes", "stores")},
}))
"""


def _run(cmd: list[str], *, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _source_modules() -> set[str]:
    """Every module of the source packages, as its installed dotted name (``z0_memory.stores.facts``)."""
    names: set[str] = set()
    for folder, package in SOURCE_PACKAGES.items():
        base = REPO / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base)
            if "__pycache__" in rel.parts:
                continue
            # Only files inside real packages (every folder on the way has an __init__.py).
            if not all((base / Path(*rel.parts[:i]) / "__init__.py").is_file() for i in range(len(rel.parts))):
                continue
            names.add(".".join([package, *rel.with_suffix("").parts]))
    return names


def _installed_modules(purelib: Path) -> set[str]:
    root = purelib / "z0_memory"
    return {
        ".".join(["z0_memory", *p.relative_to(root).with_suffix("").parts])
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts
    }


def test_wheel_installs_under_the_z0_memory_namespace(tmp_path: Path) -> None:
    assert importlib.util.find_spec("build") is not None, (
        "the 'build' package is missing: install the test extra (pip install -e '.[test]')"
    )

    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)], cwd=REPO, timeout=180)
    wheels = list(dist.glob("z0_memory-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp_path / "fresh"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    fresh_purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path).stdout.strip()
    )
    assert fresh_purelib.is_relative_to(venv)

    # The current venv's site-packages supplies the dependencies. A plain path line in a .pth is appended to
    # sys.path without processing the .pth files inside it, so the editable install's finder stays inactive.
    current_purelib = sysconfig.get_paths()["purelib"]
    (fresh_purelib / "deps.pth").write_text(current_purelib + "\n")

    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheels[0])], cwd=tmp_path)

    # Run from tmp_path, not the repo, so the source tree cannot be imported from the working directory.
    probe = json.loads(_run([str(python), "-c", PROBE], cwd=tmp_path).stdout.strip().splitlines()[-1])

    assert Path(probe["prefix"]).resolve() == venv.resolve()
    assert Path(probe["purelib"]).resolve() == fresh_purelib.resolve()
    for name, file in probe["files"].items():
        assert Path(file).resolve().is_relative_to(fresh_purelib.resolve()), f"{name} imported from {file}"
        assert not Path(file).resolve().is_relative_to(REPO), f"{name} imported from the source tree: {file}"

    # Nothing generic lands in site-packages.
    for generic in ("graphs", "nodes", "stores"):
        assert not (fresh_purelib / generic).exists(), f"site-packages has a top-level {generic!r}"
    assert probe["top_level_importable"] == {"graphs": False, "nodes": False, "stores": False}

    # Every module of the source packages is in the wheel (a subpackage left out of pyproject would be missing).
    missing = _source_modules() - _installed_modules(fresh_purelib)
    assert not missing, f"modules missing from the wheel (add their packages to pyproject): {sorted(missing)}"
    assert (fresh_purelib / "z0_memory" / "py.typed").is_file()
    # `z0-memory eval` without arguments runs the packaged scenarios: the installed package must carry them
    dataset = _run([str(python), "-c", "from z0_memory.evaluation import DEFAULT_EVAL_DATASET as d; "
                    "from z0_memory.evaluation import load_scenarios; print(d, len(load_scenarios(d)))"],
                   cwd=tmp_path).stdout.split()
    assert Path(dataset[0]).resolve().is_relative_to(fresh_purelib.resolve()) and int(dataset[1]) >= 30, dataset

    script = venv / "bin" / "z0-memory"
    assert script.is_file() and os.access(script, os.X_OK)
    assert script.read_text().splitlines()[0] == f"#!{python}"
