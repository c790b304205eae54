"""The suite's own rules: test modules share helpers through ``tests/helpers/``, never by importing
another test module (or conftest), and no test asserts on wall-clock time (timings belong in
bench/; a test bounds work: calls, rows, bytes, or the CPU-time ratios of ``helpers.growth``).

Imports are read from the syntax tree, so one inside a function or under ``TYPE_CHECKING``
counts as much as one at the top of a file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# Clocks whose readings are seconds of wall-clock time; time.thread_time and process_time are
# CPU time, which helpers.growth compares as ratios within one run.
WALL_CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(TESTS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, tree: ast.AST) -> list[str]:
    """Every module an import statement in ``tree`` names, relative imports resolved."""
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    package = package or _module_name(path)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append(base)
            if not _is_test_module(base):  # `from tests import test_x` names it in the alias
                found += [f"{base}.{alias.name}" for alias in node.names]
    return found


def _is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts[1:])


def imported_test_modules(path: Path, source: str) -> list[str]:
    """The test modules (and conftest) that the module at ``path`` imports."""
    return sorted({n for n in _imported(path, ast.parse(source)) if _is_test_module(n)})


def wall_clock_asserts(source: str) -> list[int]:
    """Lines of ``assert`` statements that put an upper bound on wall-clock time, read directly or
    through a name the same function assigned from a clock (``started = time.monotonic()`` ...
    ``assert time.monotonic() - started < 2``), or from a function of the module that returns a
    clock reading (``def timed(n): ... return time.perf_counter() - started``). A lower bound
    (``>= 0.9`` after a pause of 1 s) is left alone: a sleep guarantees it, so load cannot break
    it."""
    tree = ast.parse(source)
    clocked: set[str] = set()  # functions of the module whose result is a clock reading

    def reads_clock(node: ast.AST, timed: set[str]) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and (
                isinstance(sub.func, ast.Attribute)
                and sub.func.attr in WALL_CLOCKS
                and isinstance(sub.func.value, ast.Name)
                and sub.func.value.id == "time"
                or isinstance(sub.func, ast.Name)
                and sub.func.id in clocked
            ):
                return True
            if isinstance(sub, ast.Name) and sub.id in timed:
                return True
        return False

    def timed_names(function: ast.AST) -> set[str]:
        timed: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and reads_clock(node.value, timed):
                for target in node.targets:
                    timed |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        return timed

    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    for _ in range(2):  # a helper may return what another helper measured
        for function in functions:
            timed = timed_names(function)
            if any(
                isinstance(r, ast.Return) and r.value is not None and reads_clock(r.value, timed)
                for r in ast.walk(function)
            ):
                clocked.add(function.name)

    def bounds_above(test: ast.expr, timed: set[str]) -> bool:
        for compare in ast.walk(test):
            if not isinstance(compare, ast.Compare):
                continue
            sides = [compare.left, *compare.comparators]
            for op, low, high in zip(compare.ops, sides, sides[1:], strict=False):
                if isinstance(op, ast.Lt | ast.LtE) and reads_clock(low, timed):
                    return True
                if isinstance(op, ast.Gt | ast.GtE) and reads_clock(high, timed):
                    return True
        return False

    lines: list[int] = []
    for function in functions:
        timed = timed_names(function)
        lines += [
            node.lineno
            for node in ast.walk(function)
            if isinstance(node, ast.Assert) and bounds_above(node.test, timed)
        ]
    return sorted(set(lines))


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.parts)


@pytest.mark.parametrize(
    ("path", "source", "found"),
    [
        ("tests/test_a.py", "from tests.test_b import helper", ["tests.test_b"]),
        ("tests/test_a.py", "def f():\n    from .test_b import helper", ["tests.test_b"]),
        ("tests/test_a.py", "from tests.conftest import Result", ["tests.conftest"]),
        ("tests/test_a.py", "from tests import test_b", ["tests.test_b"]),
        ("tests/test_a.py", "import tests.test_b as b", ["tests.test_b"]),
        ("tests/helpers/x.py", "from ..test_b import y", ["tests.test_b"]),
        ("tests/test_a.py", "if TYPE_CHECKING:\n    from tests.test_b import T", ["tests.test_b"]),
        ("tests/test_a.py", "from tests.helpers.run import Result", []),
        ("tests/test_a.py", "from tests.gitlab_server.server import GitLabServer", []),
    ],
)
def test_the_import_check_finds_imported_test_modules(
    path: str, source: str, found: list[str]
) -> None:
    assert imported_test_modules(TESTS.parent / path, source) == found


def test_no_module_under_tests_imports_a_test_module() -> None:
    offenders = {
        str(p.relative_to(TESTS.parent)): names
        for p in _sources()
        if (names := imported_test_modules(p, p.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "move what they share into tests/helpers/"


def test_helpers_live_in_the_helpers_package() -> None:
    loose = [
        p.name
        for p in TESTS.glob("*.py")
        if p.name not in {"__init__.py", "conftest.py"} and not p.name.startswith("test_")
    ]
    assert loose == [], "shared helpers go in tests/helpers/"
    for helper in (TESTS / "helpers").glob("*.py"):
        tree = ast.parse(helper.read_text(encoding="utf-8"))
        tests = [
            n.name
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
        ]
        assert tests == [], f"{helper.name} holds tests: {tests}"


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("def t():\n    s = time.monotonic()\n    f()\n    assert time.monotonic() - s < 2", [4]),
        ("def t():\n    s = time.perf_counter()\n    d = time.perf_counter() - s\n"
         "    assert d < 1", [4]),
        ("def t():\n    assert 3 > time.time() - s", [2]),
        ("def t():\n    s = time.monotonic()\n    assert time.monotonic() - s >= 0.2", []),
        ("def t():\n    secs, x = f(time.monotonic())\n    assert x and 1 <= secs < 2", [3]),
        ("def timed(n):\n    s = time.perf_counter()\n    run(n)\n"
         "    return time.perf_counter() - s\n"
         "def t():\n    small, large = timed(1), min(timed(4) for _ in range(3))\n"
         "    assert large <= 6 * small", [7]),
        ("def t():\n    s = time.thread_time()\n    assert time.thread_time() - s < 1", []),
        ("def t():\n    deadline = time.monotonic() + 5\n    assert calls == 3", []),
    ],
)  # fmt: skip
def test_the_clock_check_finds_wall_clock_asserts(source: str, lines: list[int]) -> None:
    assert wall_clock_asserts(source) == lines


def test_no_test_asserts_on_wall_clock_time() -> None:
    offenders = {
        str(p.relative_to(TESTS.parent)): lines
        for p in _sources()
        if (lines := wall_clock_asserts(p.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "bound work (calls, rows, bytes) instead; timings belong in bench/"
