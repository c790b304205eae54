"""The layer contracts: every import in scout, signposts and ingest points down or across a
floor, never up, and no two units import each other, directly or round a loop.

Imports are read with ``ast`` from every module, counting those inside functions and under
``TYPE_CHECKING``: a layer that holds only because an import hides in a function does not hold.
A unit is a subpackage of ``scout`` (``scout.store``), a top-level module of ``scout``
(``scout.verdict``), or the ``signposts`` and ``ingest`` packages. ``FLOORS`` lists the units bottom
up; a unit may import units on its own floor or below (the cycle check orders those on one floor).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scout", "signposts", "ingest")

FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor.split())
    for floor in (
        # foundations: shapes and rules that need nothing of Scout's but each other
        "scout.errors scout.timefmt scout.safe_text scout.records scout.verdict scout.audit_records"
        " scout.doc_paths scout.kinds scout.normalise scout.environment scout.schedule"
        " scout.toml_input scout.config scout.progress scout.table scout.identifiers scout.words",
        # where passages come from and where they are kept
        "scout.store scout.forge scout.corpus",
        # finding passages, asking a model, composing the prompt and checking its citations
        "scout.retrieve scout.providers scout.compose scout.embeddings",
        # what Scout does with them: answers, the evaluation, the gaps and the report on them
        "scout.answer scout.hits scout.evaluation scout.gaps scout.report",
        # signpost extraction and validation, then the sweep that runs it (ingest -> signposts)
        "signposts",
        "ingest",
        # applications of all of the above
        "scout.cli scout.demo scout.serve scout.init scout.__main__ scout",
    )
)
FLOOR_OF = {unit: level for level, floor in enumerate(FLOORS) for unit in floor}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "demo/estate/" not in path.relative_to(ROOT).as_posix()  # the demo's sample code
    }


def imported(name: str, path: Path, modules: dict[str, Path] | set[str]) -> Iterator[str]:
    """Every first-party module `path` imports, wherever the import sits in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from scout import timefmt` imports the module scout.timefmt, not scout itself
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
                for alias in node.names
            ]
        else:
            continue
        yield from (t for t in targets if t.split(".")[0] in PACKAGES)


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[0] if parts[0] != "scout" or len(parts) == 1 else ".".join(parts[:2])


def unit_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {unit(name): set() for name in modules}
    for name, path in modules.items():
        for target in imported(name, path, modules):
            if unit(target) != unit(name):
                graph[unit(name)].add(unit(target))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop through each strongly connected part of more than one node (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return unit_graph(_modules())


def test_every_unit_has_a_floor(graph: dict[str, set[str]]) -> None:
    # A new module or subpackage is placed on purpose, not wherever its imports happen to allow.
    assert sorted(set(graph) - set(FLOOR_OF)) == []


def test_no_unit_imports_one_on_a_higher_floor(graph: dict[str, set[str]]) -> None:
    upward = {
        source: sorted(t for t in targets if FLOOR_OF.get(t, -1) > FLOOR_OF.get(source, -1))
        for source, targets in graph.items()
    }
    assert {source: targets for source, targets in upward.items() if targets} == {}


def test_no_units_import_each_other(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_no_modules_import_each_other() -> None:
    modules = _modules()
    graph = {name: set(imported(name, path, modules)) - {name} for name, path in modules.items()}
    # A package's __init__ re-exporting its own modules is not a loop: Python runs it first.
    for name in graph:
        graph[name] = {t for t in graph[name] if not (name.startswith(f"{t}.") and t in modules)}
    assert cycles(graph) == []


# The checker itself, on graphs whose answers are known, so a broken checker cannot pass silently.


def test_the_cycle_finder_finds_a_loop_and_only_the_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_reader_counts_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    source = tmp_path / "scout" / "verdict.py"
    source.parent.mkdir()
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from scout.store import X\n"
        "def f():\n    from . import timefmt\n    import ingest.sweep\n",
        encoding="utf-8",
    )
    found = set(imported("scout.verdict", source, {"scout.timefmt"}))
    assert found == {"scout.store", "scout.timefmt", "ingest.sweep"}


def test_the_cycle_finder_is_linear_in_a_long_chain() -> None:
    # a chain of 4,000 units closed into one loop: recursion would overflow, this must not
    graph = {str(n): {str(n + 1)} for n in range(4000)}
    graph["4000"] = {"0"}
    (loop,) = cycles(graph)
    assert len(loop) == 4001
