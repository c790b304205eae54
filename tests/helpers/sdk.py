"""The model and MCP SDKs, imported by the tests that use them, on the one worker that runs those.

anthropic takes 2.7 s to import, mcp 1.0 s and openai 0.7 s (bytecode compiled, this machine).
Imported at the top of a test module, they were paid by every pytest-xdist worker while it
collected (each worker imports every test module): 4.4 s of a worker's 8 s of collection, six
times a run. A module that needs one reaches it through :class:`Lazy` (imported on first use),
carries :data:`ONE_WORKER` (``scripts/test`` runs ``--dist loadgroup``, which keeps a group on one
worker), and takes :func:`preloaded` when its tests fork commands (tests/helpers/run.py), so the
forks find the SDK imported instead of importing it each.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

ONE_WORKER = pytest.mark.xdist_group("sdk")


class Lazy:
    """A module imported when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):  # pytest probes every module-level object for its markers
            raise AttributeError(attribute)
        return getattr(self.module(), attribute)


def preloaded(*modules: Lazy) -> Callable[[], Iterator[None]]:
    """A module-scoped autouse fixture that imports ``modules`` before the module's tests run."""

    @pytest.fixture(scope="module", autouse=True)
    def imported() -> Iterator[None]:
        for module in modules:
            module.module()
        yield

    return imported
