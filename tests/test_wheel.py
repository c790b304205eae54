"""Scout stands alone: a wheel built from this tree, installed into a new virtualenv, runs the demo.

The editable install every other test uses can read any file of the checkout; a wheel holds only
what the packages declare. So this test builds the wheel from a copy of the packages (no checkout
around it), installs it with pip into a fresh virtualenv, and runs ``scout demo`` from an empty
folder, with nothing of the checkout on the import path.

The virtualenv gets the wheel's declared dependencies, and only those (with theirs), as links to
the test environment's installed copies rather than by pip from the index: resolving and
unpacking some 40 wheels was 8 of this test's 16 s of CPU, and is pip's to test. A dependency the
wheel stops declaring is then missing there just as it would be after a real install.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

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


def _requirements(wheel: Path) -> list[Requirement]:
    """What the wheel declares it needs at run time (no extra)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        declared = email.message_from_bytes(archive.read(name)).get_all("Requires-Dist") or []
    return [Requirement(r) for r in declared if "extra ==" not in r]


def _link_dependencies(wheel: Path, site: Path) -> list[str]:
    """Link into ``site`` the installed distributions the wheel needs, transitively, as pip
    would install them (each must satisfy its specifier); their names."""
    linked: dict[str, None] = {}
    wanted = [(r, "") for r in _requirements(wheel)]
    while wanted:
        requirement, extra = wanted.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        dist = metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), (requirement, dist)
        for extra_name in requirement.extras:
            wanted += [(Requirement(r), extra_name) for r in dist.requires or []]
        key = dist.metadata["Name"].lower()
        if key in linked:
            continue
        linked[key] = None
        wanted += [(Requirement(r), "") for r in dist.requires or [] if "extra ==" not in r]
        for top in {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            target = site / top
            if not target.exists():
                target.symlink_to(Path(str(dist.locate_file(top))))
    return list(linked)


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
    (site,) = (venv / "lib").glob("python3*/site-packages")
    assert {"gql", "python-gitlab"} <= set(_link_dependencies(wheel, site))
    install = ("install", "--no-compile", "--no-deps", "--no-index", wheel)
    _run(sys.executable, *pip, "--python", python, *install, cwd=tmp_path)
    _run(sys.executable, *pip, "--python", python, "check", cwd=tmp_path)  # every need is met
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
        "gap": "declined",
    }
    assert result["index"]["passages"] > 0 and result["sweep"]["accepted"] > 0
    assert (elsewhere / "demo" / "scout.toml").read_text(encoding="utf-8") == (
        ROOT / "scout" / "demo" / "demo.toml"
    ).read_text(encoding="utf-8")
    # the report's templates are package data: the page renders from the wheel alone
    _run(venv / "bin" / "scout", "--config", "demo/scout.toml", "report", "--html", "r.html",
         cwd=elsewhere)  # fmt: skip
    assert "<h1>Scout report</h1>" in (elsewhere / "r.html").read_text(encoding="utf-8")
