"""A command first on PATH that runs some shell before the real one: to record what the real
command was given, or to hold it at a chosen call so a signal lands while it is surely running."""

from __future__ import annotations

import shutil
from pathlib import Path


def wrapped_command(directory: Path, name: str, before: str) -> Path:
    """Writes ``directory/bin/NAME``, which runs the shell ``before`` and then execs the real
    NAME with its arguments; returns the folder to put first on PATH."""
    real = shutil.which(name)
    assert real is not None, f"{name} is not installed"
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\n{before}exec "{real}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return bin_dir
