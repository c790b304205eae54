"""What the package needs is declared, and what the tests need is inside the repository."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scout", "signposts", "ingest")


def _imported_modules() -> dict[str, str]:
    """Top-level module -> the first file importing it, over every module of the three packages."""
    found: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "demo/estate" in path.as_posix():
                continue  # the demo estate's sources are data, never imported
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _requirement_name(spec: str) -> str:
    name = re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


# Optional extras a user installs for one feature, and the modules that may import each (a
# path ending in "/" is a folder): the ones made only when that feature is configured.
OPTIONAL = {
    "openai": ("scout/providers/openai.py", "scout/embeddings/openai_server.py"),
    "embeddings": ("scout/embeddings/", "scout/retrieve/dense.py"),
}


def _allowed(where: str, modules: tuple[str, ...]) -> bool:
    return any(where.startswith(m) if m.endswith("/") else where == m for m in modules)


def test_every_third_party_import_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_requirement_name(spec) for spec in project["dependencies"]}
    for extra in OPTIONAL:
        declared |= {_requirement_name(s) for s in project["optional-dependencies"][extra]}
    # the serve extra's libraries, for scout/serve/ alone (scout ask never needs them)
    serving = {_requirement_name(spec) for spec in project["optional-dependencies"]["serve"]}
    distributions = packages_distributions()
    undeclared = {}
    for module, where in _imported_modules().items():
        if module in sys.stdlib_module_names or module in PACKAGES or module == "__future__":
            continue
        names = {_requirement_name(d) for d in distributions.get(module, [module])}
        allowed = declared | serving if where.startswith("scout/serve/") else declared
        if not names & allowed:
            undeclared[module] = where
    assert undeclared == {}, "imported but not in [project] dependencies"


def test_only_scout_serve_imports_the_serve_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    serving = {_requirement_name(spec) for spec in project["optional-dependencies"]["serve"]}
    distributions = packages_distributions()
    outside = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if where.startswith("scout/serve/") or "demo/estate/" in where:
                continue
            for module in _imports_of(path):
                names = {_requirement_name(d) for d in distributions.get(module, [module])}
                if names & serving and not names & {"httpx"}:
                    outside[where] = module
    assert outside == {}


def test_an_optional_dependency_is_imported_by_its_module_alone() -> None:
    # Scout without the extra installed must still start: only the module the registry imports
    # when that provider is made may import the optional package.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for extra, modules in OPTIONAL.items():
        for name in {_requirement_name(s) for s in project["optional-dependencies"][extra]}:
            importers = sorted(
                path.relative_to(ROOT).as_posix()
                for package in PACKAGES
                for path in (ROOT / package).rglob("*.py")
                if name in _imports_of(path)
            )
            assert importers, f"no module imports {name} of the {extra} extra"
            assert [m for m in importers if not _allowed(m, modules)] == [], name


ABSOLUTE = re.compile(r"""["'](/(?:work|home|opt|mnt|srv|usr/share|Users)/[^"']*)["']""")


@pytest.mark.parametrize(
    "path",
    sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("*.py")
        if p.name != "test_packaging.py"  # its pattern names the folders it looks for
    ),
)
def test_no_test_names_a_path_outside_the_repository(path: str) -> None:
    # A fixture read from this machine's disk makes the suite pass here and nowhere else.
    text = (ROOT / path).read_text(encoding="utf-8")
    assert ABSOLUTE.findall(text) == []


def _imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_dependencies_point_one_way() -> None:
    # ingest -> signposts -> scout; the CLI and the demo are applications of all three.
    applications = ("scout/cli/", "scout/demo/")
    wrong = {}
    for package, above in (("scout", {"signposts", "ingest"}), ("signposts", {"ingest"})):
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if where.startswith(applications) or "demo/estate/" in where:
                continue
            if _imports_of(path) & above:
                wrong[where] = sorted(_imports_of(path) & above)
    assert wrong == {}
