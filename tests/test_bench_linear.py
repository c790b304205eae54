"""bench/realdocs_linear.py: a linear ranking of keyword features fitted on one split and
reported on every split, the tool behind bench/README.md's bound for keyword re-ranking."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scout.store import Store
from tests.fakes.corpus import filler, passage
from tests.helpers.realdocs import write_realdocs

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "acme/guide"
LONG = " ".join(f"step{i} explains" for i in range(40))


@pytest.fixture
def estate(tmp_path: Path) -> tuple[Path, Path]:
    # For every question BM25 ranks a one-line note above the long section that answers it
    # (short rows score higher): the answer is second, and length tells the two apart.
    rows = []
    questions = []
    for n in range(8):
        rows.append(passage(PROJECT, f"notes/n{n}.md", (1, 2), f"Note {n}", f"zorb{n} frob{n}"))
        rows.append(passage(PROJECT, f"guide/g{n}.md", (1, 40), f"Guide {n}",
                            f"zorb{n} frob{n} {LONG}"))  # fmt: skip
        questions.append({"id": f"q{n}", "question": f"how do I zorb{n} the frob{n}?",
                          "answerable": True, "split": "tune" if n < 6 else "check",
                          "note": "overlap high", "targets": [
                              {"project": PROJECT, "path": f"guide/g{n}.md"}]})  # fmt: skip
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.insert_passages([*rows, *filler(120)])
    config, realdocs = write_realdocs(tmp_path, questions)
    return config, realdocs


def run(config: Path, realdocs: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.realdocs_linear", str(config), "--realdocs", str(realdocs),
         *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


def figures(out: str, label: str) -> list[str]:
    row = next(line for line in out.splitlines() if line.split()[:1] == [label])
    return [part for part in row.split() if part != "/"][2:]


def test_weights_fitted_on_tune_lift_both_splits_and_apply_again(
    estate: tuple[Path, Path], tmp_path: Path
) -> None:
    config, realdocs = estate
    saved = tmp_path / "weights.json"
    done = run(config, realdocs, "--save", str(saved))
    assert done.returncode == 0, done.stderr
    # recall@8 before / after, MRR before / after: the answer goes from second to first on the
    # split it was fitted on and on the split it was not.
    assert figures(done.stdout, "tune")[:4] == ["1.000", "1.000", "0.500", "1.000"]
    assert figures(done.stdout, "check")[:4] == ["1.000", "1.000", "0.500", "1.000"]
    weights = json.loads(saved.read_text())
    again = run(config, realdocs, "--weights", str(saved))
    assert again.returncode == 0, again.stderr
    assert figures(again.stdout, "check") == figures(done.stdout, "check")
    assert weights != {"order": 1.0}


@pytest.mark.parametrize(
    "args", [("--depth", "5"), ("--depth", "101"), ("--cap", "-1"), ("--fit-on", "nosuch")]
)
def test_bad_settings_exit_2(estate: tuple[Path, Path], args: tuple[str, str]) -> None:
    done = run(*estate, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[]",
        "{}",
        '{"order": "1"}',
        '{"order": true}',
        '{"nosuch": 1}',
        '{"order": 1e999}',
        '{"order": {"nested": 1}}',
        "\u0000\x1b[2J",
    ],
)
@pytest.mark.parametrize("option", ["--weights", "--only"])
def test_malformed_files_exit_2_with_one_line(
    estate: tuple[Path, Path], tmp_path: Path, option: str, text: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    done = run(*estate, option, str(bad))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
