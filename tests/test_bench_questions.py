"""bench/realdocs_questions.py: a question file's targets must name indexed passages, and each
answerable question is classed by the vocabulary it shares with its answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.realdocs_questions import overlap, overlap_class
from scout.store import PassageRecord, Store
from tests.fakes.corpus import filler

ROOT = Path(__file__).resolve().parent.parent
SHA = "0" * 40
PROJECT = "devdocs/gitlab-charts"


def passage(path: str, heading: str, body: str, start: int, end: int) -> PassageRecord:
    url = f"https://gitlab.example/{PROJECT}/-/blob/{SHA}/{path}#L{start}-{end}"
    return PassageRecord(PROJECT, path, SHA, start, end, heading, body, "docs", "corpus", url)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.insert_passages(
            [
                passage("doc/installation/uninstall.md", "Uninstall the GitLab Helm chart",
                        "To uninstall the chart, run helm uninstall gitlab.", 1, 6),
                passage("doc/installation/uninstall.md",
                        "Uninstall the GitLab Helm chart > Persistent volumes",
                        "Persistent volume claims are kept: delete them with kubectl.", 7, 12),
            ]
        )  # fmt: skip
    path = tmp_path / "scout.toml"
    path.write_text('[forge]\nkind = "local"\nurl = "https://gitlab.example"\npath = "."\n'
                    'groups = ["devdocs"]\n[store]\npath = "scout.db"\n')  # fmt: skip
    return path


def check(config: Path, questions: object, tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    file = tmp_path / "q.json"
    file.write_text(json.dumps(questions) if not isinstance(questions, str) else questions)
    done = subprocess.run(
        [sys.executable, "-m", "bench.realdocs_questions", str(config), str(file), *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr, file


def question(qid: str, text: str, **target: object) -> dict[str, object]:
    target = {"project": PROJECT, "path": "doc/installation/uninstall.md", **target}
    return {"id": qid, "question": text, "answerable": True, "targets": [target],
            "note": "the uninstall page", "split": "tune"}  # fmt: skip


def test_overlap_counts_the_question_words_the_best_passage_holds() -> None:
    passages = [("Uninstall", "helm uninstall removes the release"), ("Other", "volumes")]
    # "remove", "release": 2 of 3 content words ("gitlab" is a product name, "how" a stop word)
    assert overlap("how do I remove the gitlab release completely", passages) == 2 / 3
    assert overlap("the and of", passages) == 0.0
    assert [overlap_class(x) for x in (0.34, 0.35, 0.59, 0.6)] == ["low", "mid", "mid", "high"]


def test_targets_must_name_a_passage_and_notes_get_the_overlap_class(
    config: Path, tmp_path: Path
) -> None:
    good = question("a001", "wipe the volumes after uninstalling", heading_contains="volumes")
    code, out, file = check(config, [good], tmp_path, "--write")
    assert code == 0, out
    written = json.loads(file.read_text())[0]
    assert written["note"].startswith("overlap ") and written["note"].endswith("the uninstall page")
    # written again, the class is replaced, not stacked
    code, out, file = check(config, json.loads(file.read_text()), tmp_path, "--write")
    assert json.loads(file.read_text())[0]["note"].count("overlap ") == 1

    missing = question("a002", "uninstall it", heading_contains="Backups")
    code, out, file = check(config, [missing], tmp_path, "--write")
    assert code == 1 and "a002: target matches no passage" in out
    assert "overlap" not in json.loads(file.read_text())[0]["note"]  # nothing written
    outside = question("a003", "uninstall it", line=40)
    assert check(config, [outside], tmp_path)[0] == 1


@pytest.mark.parametrize(
    "questions",
    [
        "",
        "{not json",
        {"id": "a001"},
        [[]],
        [{"id": "a001", "question": "", "answerable": True, "targets": [], "split": "tune"}],
        [{"id": "a001", "question": "x", "answerable": "yes", "targets": [], "split": "tune"}],
        [{"id": "a001", "question": "x", "answerable": True, "targets": [{}], "split": "dev"}],
        [question("a001", "uninstall"), question("a001", "uninstall again")],
        [question("a001", "uninstall", line="ten")],
        [question("a001", "uninstall", heading_contains=["Uninstall"])],
        [{**question("a001", "uninstall"), "note": 7}],
    ],
    ids=[
        "empty",
        "not_json",
        "not_a_list",
        "not_objects",
        "no_text_no_targets",
        "answerable_not_bool",
        "bad_target_and_split",
        "repeated_id",
        "line_not_a_number",
        "heading_not_text",
        "note_not_text",
    ],
)
def test_malformed_question_files_are_reported_not_raised(
    config: Path, tmp_path: Path, questions: object
) -> None:
    code, out, _ = check(config, questions, tmp_path)
    assert code in (1, 2), out
    assert "Traceback" not in out


def test_weak_terms_are_heading_words_associated_with_the_question(
    config: Path, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "scout.db") as store:
        store.insert_passages(
            [
                passage(f"doc/charts/c{i}.md", f"Chart {i} > Persistence",
                        f"Volumes of chart {i} survive an uninstall; claims stay.", 1, 3)
                for i in range(4)
            ]
            + filler(120)  # the words of a real corpus's other pages
        )  # fmt: skip
    realdocs = tmp_path / "realdocs"
    realdocs.mkdir()
    (realdocs / "questions.json").write_text(
        json.dumps([{"id": "q1", "question": "why do my volumes survive?"}])
    )
    (realdocs / "questions-more.json").write_text("[]")
    out = tmp_path / "terms.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.realdocs_weak_terms", str(config), str(out),
         "--realdocs", str(realdocs), "--top", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # "persistence" heads every passage holding "volumes"; the question's own words never come.
    assert json.loads(out.read_text()) == {"q1": ["persistence"]}
