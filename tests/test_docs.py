"""Docs that cannot drift: every command has help and a README entry; exit codes match."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from scout.cli.main import cli
from scout.errors import EXIT_CODES, ScoutError

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "scout") -> Iterator[tuple[str, click.Command]]:
    # As click finds them (the group loads its commands' modules on demand).
    ctx = click.Context(group)
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        assert command is not None, name
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")


COMMANDS = list(_commands(cli))


def test_every_command_is_found() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"scout ask", "scout index", "scout sweep", "scout signposts show"} <= names
    assert len(names) == 17


@pytest.mark.parametrize(("name", "command"), COMMANDS)
def test_every_command_has_help_and_a_readme_entry(name: str, command: click.Command) -> None:
    assert command.help, f"{name} has no help text"
    assert f"`{name}" in README, f"{name} is not documented in README.md"
    option_names = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert "--json" in option_names, f"{name} lacks --json"


# Every command whose result is a list of rows (its --json document is a list, or holds one).
LISTS = {"scout search", "scout signposts", "scout signposts extract", "scout gaps", "scout eval"}


@pytest.mark.parametrize(("name", "command"), COMMANDS)
def test_every_command_that_lists_rows_has_nl_and_a_readme_entry(
    name: str, command: click.Command
) -> None:
    option_names = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert ("--nl" in option_names) == (name in LISTS), f"{name}: --nl iff it lists rows"
    assert ("--no-pager" in option_names) == (name in LISTS), f"{name}: --no-pager iff --nl"
    if name in LISTS:
        (conventions,) = [line for line in README.splitlines() if line.startswith("- **`--nl`**")]
        paragraph = README[README.index(conventions) :].split("\n- ")[0]
        assert f"`{name}`" in paragraph, f"{name} is not among the README's --nl commands"
        entry = README[README.index(f"- `{name} ") :].split("\n- ")[0]
        assert "--nl" in entry, f"the README entry of {name} does not show --nl"


def test_every_exit_code_is_in_the_readme_table() -> None:
    rows = dict(re.findall(r"^\| (\d) \| (.+) \|$", README, flags=re.MULTILINE))
    assert sorted(int(code) for code in rows) == sorted(EXIT_CODES)


def test_every_error_class_has_a_documented_exit_code() -> None:
    def walk(cls: type[ScoutError]) -> Iterator[type[ScoutError]]:
        yield cls
        for sub in cls.__subclasses__():
            yield from walk(sub)

    for cls in walk(ScoutError):
        assert cls.__doc__ and cls.__doc__.startswith("Raised when"), cls
        assert cls.exit_code in EXIT_CODES, cls


ROOT = Path(__file__).resolve().parent.parent
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
INVARIANTS = dict(
    re.findall(r"^(\d+)\. \*\*(.+?)\*\*", DESIGN.split("## Invariants")[1], flags=re.MULTILINE)
)


def test_every_invariant_names_tests_that_exist() -> None:
    section = DESIGN.split("## Invariants")[1].split("\n## ")[0]
    blocks = re.split(r"^\d+\. ", section, flags=re.MULTILINE)[1:]
    assert len(blocks) == len(INVARIANTS) >= 10
    for number, block in enumerate(blocks, start=1):
        named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", block)
        assert named, f"invariant {number} names no test"
        for path, test in named:
            source = (ROOT / path).read_text(encoding="utf-8")
            assert f"def {test}(" in source, f"invariant {number}: {path}::{test} does not exist"


def test_code_that_cites_an_invariant_cites_one_the_design_page_has() -> None:
    cited = set()
    for package in ("scout", "signposts", "ingest"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "DESIGN.md" not in text, f"{path}: the design page is docs/design.md"
            cited |= {int(n) for n in re.findall(r"invariants? (\d+)", text)}
    assert cited and cited <= {int(n) for n in INVARIANTS}


def test_the_readme_points_at_the_design_page_and_no_shared_folder() -> None:
    assert "docs/design.md" in README
    assert "shared folder" not in README and "../shared" not in README
