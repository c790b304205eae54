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
    assert len(names) == 18


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


# --- every command and example in the README, against the real CLI ----------------------------

README_LINES = 600  # the README is for users: at most this long (issue 42)
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[str]:
    """The README's fenced blocks of one language, in order."""
    return [body for kind, body in BLOCK.findall(README) if kind == lang]


def scout_lines() -> list[str]:
    """Every `scout ...` command line of the README's sh and console blocks."""
    found = []
    for kind in ("sh", "console"):
        for body in blocks(kind):
            for line in body.splitlines():
                line = line.removeprefix("$ ").strip()
                if line.startswith("scout "):
                    found.append(line)
    return found


def parse(line: str) -> str:
    """Parse a README command line as the real ``scout`` would (options, arguments, choices),
    without running it; the command's name, or click's error."""
    import shlex
    import warnings

    words = shlex.split(line, comments=True)[1:]
    words = words[: words.index(">")] if ">" in words else words  # a redirection
    ctx = cli.make_context("scout", words)
    command: click.Command = cli
    while isinstance(command, click.Group):
        with warnings.catch_warnings():  # click 8.2 to 8.x keeps the command name there
            warnings.simplefilter("ignore", DeprecationWarning)
            rest = [*ctx.protected_args, *ctx.args]
        if not rest:
            break
        name, found, rest = command.resolve_command(ctx, rest)
        assert name is not None and found is not None
        ctx = found.make_context(name, rest, parent=ctx)
        command = found
    return ctx.command_path


def test_the_readme_is_for_users_and_short() -> None:
    assert len(README.splitlines()) <= README_LINES
    # developer material lives in docs/: the README points there
    for page in ("docs/design.md", "docs/development.md", "docs/performance.md"):
        assert page in README and (ROOT / page).is_file()


def test_every_file_the_readme_links_to_exists() -> None:
    linked = re.findall(r"\]\(((?!https?:|#)[^)\s]+)\)", README)
    assert "docs/page-offline.png" in linked and "docs/performance.md" in linked
    missing = [path for path in linked if not (ROOT / path.split("#")[0]).exists()]
    assert missing == []


@pytest.mark.parametrize("line", scout_lines())
def test_every_scout_command_in_the_readme_parses(line: str) -> None:
    assert parse(line).startswith("scout")


def test_the_readme_shows_every_command_it_lists_in_a_way_that_parses() -> None:
    # the check above would pass on a README with no examples: it has them
    assert {parse(line).split()[1] for line in scout_lines()} >= {
        "init",
        "index",
        "ask",
        "sweep",
        "worker",
        "serve",
        "eval",
        "signposts",
        "gaps",
    }


def test_every_toml_example_in_the_readme_loads(tmp_path: Path) -> None:
    from scout.config import load_config
    from scout.evaluation.evalfile import load

    examples = blocks("toml")
    assert len(examples) >= 2
    for n, body in enumerate(examples):
        target = tmp_path / f"example{n}.toml"
        if "[[question]]" in body:
            target.write_text(body, encoding="utf-8")
            assert load(target)
        else:  # a config fragment: with a forge, it is a config every command loads
            forge = '[forge]\nkind = "local"\nurl = "https://g.example"\npath = "e"\n'
            target.write_text(forge + 'groups = ["acme"]\n\n' + body, encoding="utf-8")
            assert load_config(target)


# The repository the README's "Your own docs" inits on, beside the clone: a MkDocs project.
MYLIB = {
    "mkdocs.yml": "site_name: MyLib\nsite_url: https://mylib.example.org/\nnav:\n  - index.md\n",
    "README.md": "# mylib\n\nA library. Its docs are in docs/.\n",
    "docs/index.md": "# MyLib\n\nMyLib reads and writes frobs.\n",
    "docs/configure.md": "# MyLib\n\n## Configure\n\n### The cache\n\nThe cache is kept for "
    "seven days, then purged by `mylib clean`.\nSet `MYLIB_CACHE` to move it.\n",
}
PLACEHOLDERS = {
    "<n>": r"\d+(?:\.\d+)?",
    "<sha>": r"[0-9a-f]{7,64}",
    "<time>": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
    "<date>": r"\d{4}-\d\d-\d\d",
}


def console_examples() -> list[list[tuple[str, list[str]]]]:
    """Each console block as its commands, each with the output the README shows for it."""
    examples = []
    for body in blocks("console"):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        examples.append(steps)
    return examples


def shown_line(expected: str) -> re.Pattern[str]:
    """A line of shown output as a pattern: placeholders match what varies (times, shas,
    counts), and a run of spaces any run (tables align to what they hold)."""
    pattern = re.escape(expected.rstrip())
    for name, value in PLACEHOLDERS.items():
        pattern = pattern.replace(re.escape(name), value)
    return re.compile(re.sub(r"(?:\\ )+", " +", pattern))


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether the output is the shown one; a shown line `...` stands for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[n:]) for n in range(len(actual) + 1))
    return (
        bool(actual)
        and bool(shown_line(expected[0]).fullmatch(actual[0].rstrip()))
        and (matches(expected[1:], actual[1:]))
    )


def _git_repo(root: Path, files: dict[str, str], remote: str) -> None:
    from scout.demo.builder import pinned_git

    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    me, stamp = ("Ann", "ann@example.com"), "2026-01-01T00:00:00Z"
    pinned_git(root, ["init", "-q", "-b", "main"], me, stamp)
    pinned_git(root, ["add", "-A"], me, stamp)
    pinned_git(root, ["commit", "-qm", "docs"], me, stamp)
    pinned_git(root, ["remote", "add", "origin", remote], me, stamp)


@pytest.mark.slow
def test_every_console_example_in_the_readme_is_what_the_real_cli_prints(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    home = tmp_path / "home"
    clone = home / "scout"  # the README's reader is in their clone, ~/scout
    clone.mkdir(parents=True)
    _git_repo(home / "src" / "mylib", MYLIB, "git@github.com:acme/mylib.git")
    bin_dir = Path(sys.executable).parent
    claude = shutil.which("claude")
    path = [str(bin_dir)] + [
        p
        for p in os.environ["PATH"].split(os.pathsep)
        if not claude or Path(p) != Path(claude).parent
    ]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SCOUT_", "GITLAB_"))},
        "HOME": str(home),
        "PATH": os.pathsep.join(path),
        "COLUMNS": "120",  # the README's tables are shown on a 120-column terminal
        "NO_COLOR": "1",
        "SCOUT_PAGER": "cat",
    }

    def run(script: str) -> str:
        done = subprocess.run(
            ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.replace(str(home), "~")

    run("scout demo --dir scout-demo > /dev/null")  # what scripts/demo runs after set-up
    examples = console_examples()
    assert len(examples) >= 3
    for steps in examples:
        markers = [f"@@step {n}@@" for n in range(len(steps))]
        script = "".join(
            f"echo '{m}'\n{command} 2>&1\n" for m, (command, _) in zip(markers, steps, strict=True)
        )
        out = run(script)
        for marker, (command, expected) in zip(markers, steps, strict=True):
            shown = out.split(marker + "\n", 1)[1].split("@@step ", 1)[0].rstrip("\n")
            actual = shown.splitlines() if shown else []
            assert matches(expected, actual), (
                f"$ {command}\n--- README\n"
                + "\n".join(expected)
                + "\n--- scout\n"
                + "\n".join(actual)
            )
    # the README's MCP client, with the MCP SDK's own client, on the config `scout init` wrote
    (python,) = blocks("python")
    (tmp_path / "try_mcp.py").write_text(python, encoding="utf-8")
    tools, url = run(f"'{sys.executable}' '{tmp_path / 'try_mcp.py'}'").splitlines()
    assert tools == "['search_docs', 'ask_docs']"
    assert url.startswith("https://local.invalid/local/handbook/-/blob/") and "#L" in url
