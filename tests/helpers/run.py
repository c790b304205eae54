"""Running the real ``scout``: the command line and what a run gives back."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

SCOUT = [sys.executable, "-m", "scout"]


@dataclass
class Result:
    """One run's exit code and its two streams, kept apart."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)
