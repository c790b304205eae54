"""Scout stands alone: a wheel built from this tree, installed into a new virtualenv, runs the demo.

The editable install every other test uses can read any file of the checkout; a wheel holds only
what the packages declare. So this test builds the wheel from a copy of the packages (no checkout
around it), installs it with pip (dependencies from the configured index) into a fresh virtualenv,
and runs ``scout demo`` from an empty folder, with nothing of the checkout on the import path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("scout", "signposts", "ingest", "pyproject.toml", "README.md")

pytestmark = pytest.mark.slow


def _run(*command: str | Path, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCOUT_CONFIG")}
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}"
    return done


def test_the_demo_runs_from_an_installed_wheel(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SHIPPED:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    pip = ("-m", "pip", "--disable-pip-version-check", "-q")
    _run(sys.executable, *pip, "wheel", "--no-deps", "-w", tmp_path / "dist", source, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("scout-*.whl")

    venv = tmp_path / "venv"
    # No pip of its own (this interpreter's pip installs into it, `--python`) and no bytecode
    # compiled at install: with them this test took 36 s of CPU, without them 16 s, and neither
    # is Scout's to test.
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(sys.executable, *pip, "--python", python, "install", "--no-compile", wheel, cwd=tmp_path)
    shutil.rmtree(source)  # nothing the installed package could still read from

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(python, "-c", "import scout; print(scout.__file__)", cwd=elsewhere).stdout
    assert Path(where.strip()).is_relative_to(venv)

    done = _run(venv / "bin" / "scout", "demo", "--dir", "demo", "--json", cwd=elsewhere)
    result = json.loads(done.stdout)
    assert {name: a["outcome"] for name, a in result["answers"].items()} == {
        "answered": "answered",
        "declined": "declined",
        "signposted": "answered",
    }
    assert result["index"]["passages"] > 0 and result["sweep"]["accepted"] > 0
    assert (elsewhere / "demo" / "scout.toml").read_text(encoding="utf-8") == (
        ROOT / "scout" / "demo" / "demo.toml"
    ).read_text(encoding="utf-8")
    # the report's templates are package data: the page renders from the wheel alone
    _run(venv / "bin" / "scout", "--config", "demo/scout.toml", "report", "--html", "r.html",
         cwd=elsewhere)  # fmt: skip
    assert "<h1>Scout report</h1>" in (elsewhere / "r.html").read_text(encoding="utf-8")
