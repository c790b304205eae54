"""bench/realdocs_fusion.py: retrieval's candidate lists fused under each setting, with the
questions each setting gains and loses against the question's own words (the tool behind the
fusion figures in docs/performance.md)."""

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


@pytest.fixture
def estate(tmp_path: Path) -> tuple[Path, Path, Path]:
    # Each answer says what the question asks in other words ("snapshot" for "backup"): the
    # question's own words find a note first, the model's term finds the answer.
    rows, questions, terms = [], [], {}
    for n in range(6):
        rows.append(passage(PROJECT, f"notes/n{n}.md", (1, 2), f"Note {n}", f"backup{n} note"))
        rows.append(passage(PROJECT, f"guide/g{n}.md", (1, 9), f"Guide {n}",
                            f"take a snapshot{n} snapshot{n} of the data volume, restore it "
                            "later"))  # fmt: skip
        questions.append({"id": f"q{n}", "question": f"how do I backup{n} my data?",
                          "answerable": True, "split": "tune" if n < 4 else "check",
                          "note": "overlap low", "targets": [
                              {"project": PROJECT, "path": f"guide/g{n}.md"}]})  # fmt: skip
        terms[f"q{n}"] = [f"snapshot{n}"]
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.insert_passages([*rows, *filler(120)])
    config, realdocs = write_realdocs(tmp_path, questions)
    expanded = tmp_path / "terms.json"
    expanded.write_text(json.dumps(terms))
    return config, realdocs, expanded


def run(config: Path, realdocs: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.realdocs_fusion", str(config), "--realdocs", str(realdocs),
         *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


def cells(line: str) -> dict[str, tuple[float, float, str]]:
    """mode -> (recall@8, MRR, gained-lost) of one report line."""
    out = {}
    for cell in line.split("|"):
        parts = cell.split()
        mode = next(p for p in parts if p in ("words", "expanded", "rrf", "dense", "both"))
        at = parts.index(mode)
        recall, mrr = (float(x) for x in parts[at + 1].split("/"))
        out[mode] = (recall, mrr, next(p for p in parts if p.startswith("+")))
    return out


def tune_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith("tune"))


def test_each_setting_reports_every_split_with_gains_and_losses(
    estate: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    config, realdocs, expanded = estate
    out = tmp_path / "ranks.json"
    done = run(config, realdocs, "--expanded", str(expanded), "--set", "KEEP_OWN=0,2",
               "--questions-out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    blocks = done.stdout.split("== ")[1:]
    assert [block.splitlines()[0] for block in blocks] == ["{'KEEP_OWN': 0}", "{'KEEP_OWN': 2}"]
    for block in blocks:
        found = cells(tune_line(block))
        # the model's term lifts the answer above where the question's own words put it
        assert found["expanded"][1] > found["words"][1]
        assert found["words"][2] == "+0-0" and found["expanded"][2].endswith("-0")
        assert "check" in block
    ranks = json.loads(out.read_text())
    assert any(r["expanded"][0] < r["words"][0] for r in ranks[0]["ranks"].values())


def test_noise_replaces_the_terms_with_another_questions(
    estate: tuple[Path, Path, Path],
) -> None:
    config, realdocs, expanded = estate
    done = run(config, realdocs, "--expanded", str(expanded), "--noise", "bad")
    assert done.returncode == 0, done.stderr
    found = cells(tune_line(done.stdout))
    assert found["expanded"][1] <= found["words"][1]  # another question's term lifts nothing


@pytest.mark.parametrize(
    "extra",
    [["--set", "NO_SUCH_CONSTANT=1"], ["--dense"], ["--noise", "some"]],
)
def test_bad_settings_exit_2(estate: tuple[Path, Path, Path], extra: list[str]) -> None:
    config, realdocs, _ = estate
    done = run(config, realdocs, *extra)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip()
