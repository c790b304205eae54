"""Two names for one GitLab: ``forge.url`` an internal API address, issues linking the public
name (``forge.web_url``) or an old one (``forge.aliases``). References on any name of the
instance are read as on the public one; a GitLab-shaped URL on any other host is dropped and
counted ``skipped.other_host`` (before: dropped with nothing counted anywhere).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from signposts.extract import extract
from signposts.references import MAX_DROPPED, ExtractContext
from tests.helpers.demo import demo_estate
from tests.helpers.growth import assert_linear
from tests.helpers.run import Result

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
PUBLIC = "https://gitlab.acme.example"
INTERNAL = "http://10.0.0.5:8080"
CTX = ExtractContext(gitlab_url=PUBLIC, aliases=(INTERNAL, "https://git.acme.example"))
BLOB = "acme/config/-/blob/main/docs/credentials.md#L3"


@pytest.mark.parametrize(
    ("text", "reference", "other_host"),
    [
        (f"see {PUBLIC}/{BLOB}", f"{BLOB}", 0),
        (f"see {INTERNAL}/{BLOB}", f"{BLOB}", 0),
        (f"see https://git.acme.example/{BLOB}", f"{BLOB}", 0),
        (f"see https://gitlab.com/{BLOB}", None, 1),
        ("see https://evil.example/acme/x/-/raw/main/a.md", None, 1),
        ("see https://evil.example/acme/x/-/tree/main/docs", None, 1),
        ("see https://evil.example/acme/x/-/commit/0123456789abcdef0123", None, 1),
        ("see https://evil.example/acme/x/-/merge_requests/7", None, 1),
        ("see https://example.org/some/page.html", None, 0),  # not GitLab-shaped: not counted
        ("see https://evil.example/acme/x/-/issues/7", None, 0),  # not a reference route
        (f"see {PUBLIC}/acme/x/-/tree/main/docs", None, 0),  # our host: a tree is no reference
    ],
    ids=[
        "public-name",
        "internal-api-address",
        "alias",
        "gitlab-dot-com",
        "raw-elsewhere",
        "tree-elsewhere",
        "commit-elsewhere",
        "mr-elsewhere",
        "any-other-url",
        "issue-route-elsewhere",
        "tree-on-our-host",
    ],
)
def test_references_on_every_name_of_the_instance_and_none_elsewhere(
    text: str, reference: str | None, other_host: int
) -> None:
    found = extract(text, CTX)
    assert [r.reference for r in found.references] == ([reference] if reference else [])
    assert found.skipped["other_host"] == other_host
    if reference:
        # written on the public name whichever name the issue used
        assert found.references[0].url is not None
        assert found.references[0].url.startswith(f"{PUBLIC}/")


def test_dropped_references_are_kept_bounded_but_all_counted() -> None:
    urls = [f"https://h{n}.example/a/b/-/blob/main/f{n}.md" for n in range(MAX_DROPPED + 50)]
    found = extract(" ".join(urls), CTX)
    assert found.skipped["other_host"] == MAX_DROPPED + 50
    assert len(found.dropped) == MAX_DROPPED
    assert found.dropped[0] == (urls[0], "other_host")


def test_the_other_host_check_grows_linearly_on_its_worst_case() -> None:
    # a long path of '-' segments: every position is a candidate route
    def over(n: int) -> Callable[[], object]:
        text = "https://evil.example/" + "-/" * n + "blob"
        return lambda: extract(text, CTX)

    assert_linear(over, 2_000)


def _demo(tmp_path: Path, forge: str) -> Path:
    demo_estate(tmp_path / "estate")
    config = tmp_path / "scout.toml"
    text = DEMO_CONFIG.read_text().replace(f'url = "{PUBLIC}"', forge, 1)
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.slow
@pytest.mark.parametrize(
    ("forge", "same", "other_host"),
    [
        (f'url = "{INTERNAL}"', False, True),
        (f'url = "{INTERNAL}"\nweb_url = "{PUBLIC}"', True, False),
        (f'url = "{INTERNAL}"\naliases = ["{PUBLIC}"]', True, False),
    ],
    ids=["internal-url-alone-counts-them", "web-url-reads-them", "an-alias-reads-them"],
)
def test_a_sweep_behind_a_proxy_reads_references_on_the_public_name(
    tmp_path: Path, scout: Callable[..., Result], forge: str, same: bool, other_host: bool
) -> None:
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    config = _demo(baseline, f'url = "{PUBLIC}"')
    expected = scout("sweep", "--json", config=config).json()
    assert expected["accepted"] >= 5 and "other_host" not in expected["skipped"]
    behind = tmp_path / "behind"
    behind.mkdir()
    config = _demo(behind, forge)
    done = scout("sweep", "--json", config=config)
    assert done.code == 0, done.stderr
    swept = done.json()
    if same:
        assert (swept["accepted"], swept["references"]) == (
            expected["accepted"],
            expected["references"],
        )
    else:
        assert swept["accepted"] < expected["accepted"]
    assert (swept["skipped"].get("other_host", 0) > 0) == other_host


@pytest.mark.slow
def test_extract_dropped_says_what_was_dropped_and_why(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path, f'url = "{PUBLIC}"')
    issue = tmp_path / "issue.txt"
    issue.write_text(
        f"See {PUBLIC}/{BLOB} and https://gitlab.com/{BLOB} and https://example.org/x.html",
        encoding="utf-8",
    )
    plain = scout("signposts", "extract", "--json", str(issue), config=config)
    assert plain.code == 0, plain.stderr
    assert [r["reference"] for r in plain.json()] == [BLOB]
    assert "1 GitLab-shaped URL(s) on another host were dropped" in plain.stderr
    done = scout("signposts", "extract", "--dropped", "--json", str(issue), config=config)
    assert done.code == 0, done.stderr
    doc = done.json()
    assert set(doc) == {"references", "dropped"}
    assert [r["reference"] for r in doc["references"]] == [BLOB]
    assert doc["dropped"] == [{"reference": f"https://gitlab.com/{BLOB}", "reason": "other_host"}]
    text = scout("signposts", "extract", "--dropped", str(issue), config=config)
    last = text.stdout.splitlines()[-1].split()
    assert last[0] == "dropped" and last[-1] == "(other_host)", text.stdout
    lines = scout("signposts", "extract", "--dropped", "--nl", str(issue), config=config)
    rows = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [r["kind"] for r in rows] == ["file", "dropped"] and rows[1]["reason"] == "other_host"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("web_url", '"gitlab.acme.example"', "forge.web_url: expected an http(s) URL"),
        ("aliases", '["ftp://x"]', "forge.aliases: expected http(s) URLs"),
        ("aliases", '"https://x"', "forge.aliases: Input should be a valid list"),
    ],
)
def test_bad_forge_names_are_config_errors(
    tmp_path: Path, scout: Callable[..., Result], key: str, value: str, message: str
) -> None:
    config = _demo(tmp_path, f'url = "{PUBLIC}"\n{key} = {value}')
    done = scout("sweep", config=config)
    assert (done.code, done.stdout) == (3, ""), done.stderr
    assert message in done.stderr and done.stderr.count("\n") == 1
