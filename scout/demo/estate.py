"""The bundled demo estate: group ``acme`` built from the fixture sources in ``scout/demo/estate/``.

``scout/demo/estate/<project>/`` holds each project's tree at the head of its default branch;
``scout/demo/estate/_extra/<project>/`` holds files that exist only in history or on a branch. The
history (reverted, superseded and unmerged commits, merge requests in every state, a deleted file,
lines that moved) is written here as small edits of those sources, so every build gives the same
shas. Issue texts live in ``scout/demo/estate/_issues.toml`` with ``{case}`` placeholders, filled in
from the build's shas; they exercise every signpost kind, accepted and rejected, and
``DemoEstate.cases`` names each planted reference and what validation should make of it.

Main rule: facts the demo answers from code (the FX rounding rule in ``src/ledger/rates.py``) never
appear in any document, and issue text never states an answer, so a citation can only come from a
target, never from an issue.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from scout.demo.builder import EstateBuilder, Repo
from scout.errors import UsageError

# Read through importlib.resources so the estate builds from an installed wheel as from a checkout.
SOURCES = resources.files("scout.demo").joinpath("estate")
URL = "https://gitlab.acme.example"
DOCS_URL = "https://docs.acme.example/handbook/"

QUESTIONS = {
    "answered": "How often are deploy keys rotated?",
    # offline mode declines it: no one passage holds its words (not a gap: no model judged it)
    "declined": "How long are ledger database backups retained?",
    "signposted": "How are FX rates rounded in the ledger, and why?",
    # retrieval finds nothing for it: a documentation gap whoever answers
    "gap": "Who waters the office plants?",
}

# A phrase from each project whose documents must never reach the store, a prompt or an answer.
OFF_CORPUS_PHRASES = {
    "acme/secrets": "Vault unseal keys are split into five shares",
    "acme/infra": "terraform-locks-eu-west",
    "acme/legacy": "hosts-2019.txt",
}

Expect = Literal["accepted", "corpus_rules", "resolves", "addresses", "ignored"]


@dataclass(frozen=True)
class Case:
    """One reference planted in an issue and the outcome the estate was built to produce.

    ``expect`` is the first validation check that fails (``corpus_rules``, ``resolves``,
    ``addresses``), ``accepted`` when the target passes all three by design, or ``ignored`` when
    the text is no signpost at all (issue references, other hosts, system notes, unread issues).
    ``target``/``lines`` give the expected target at the head sha where one is known.
    """

    name: str
    project: str
    iid: int
    text: str
    expect: Expect
    target: str | None = None
    lines: tuple[int, int] | None = None


@dataclass(frozen=True)
class DemoEstate:
    root: Path  # the estate directory
    shas: dict[str, str]  # named commits: "ledger:reverted", "ledger:head", "handbook:head", ...
    questions: dict[str, str]  # "answered", "declined", "signposted", "gap"
    cases: dict[str, Case] = field(default_factory=dict)


def build_demo_estate(root: Path, *, canary: str | None = None, url: str = URL) -> DemoEstate:
    """Build the demo estate into ``root`` (absent or empty).

    ``url`` is the forge web URL that estate.toml and the issues' links are built on (tests that
    serve the estate through the GitLab API test server pass the server's URL). With ``canary``,
    that string is planted in every issue's title and description and in every note, so tests can
    prove issue prose never reaches the store, a prompt or an answer.
    """
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"{root} is not empty; the demo estate is built into a fresh folder")
    builder = EstateBuilder(root, url=url)
    shas: dict[str, str] = {}
    _handbook(builder, shas)
    _ledger(builder, shas)
    _small_projects(builder, shas)
    cases = _issues(builder, shas, canary, url)
    builder.write()
    return DemoEstate(root=root, shas=shas, questions=dict(QUESTIONS), cases=cases)


# --- sources -----------------------------------------------------------------------------------


def _tree(project: str, base: Traversable = SOURCES) -> dict[str, str]:
    top = base
    for part in project.split("/"):
        top = top.joinpath(part)
    return dict(sorted(_files(top, "")))


def _files(folder: Traversable, prefix: str) -> Iterator[tuple[str, str]]:
    for entry in folder.iterdir():
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            yield from _files(entry, f"{prefix}{entry.name}/")
        else:
            yield f"{prefix}{entry.name}", entry.read_text(encoding="utf-8")


def _extra(project: str, path: str) -> str:
    return SOURCES.joinpath("_extra", *project.split("/"), *path.split("/")).read_text(
        encoding="utf-8"
    )


def _cut(text: str, piece: str) -> str:
    """``text`` without ``piece`` (which must occur exactly once: the sources and edits agree)."""
    return _swap(text, piece, "")


def _swap(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise AssertionError(f"fixture edit expects exactly one {old[:40]!r}")
    return text.replace(old, new)


def _section(text: str, heading: str) -> str:
    """The lines from ``heading`` up to (not including) the next heading of the same level."""
    level = heading.split(" ", 1)[0] + " "
    start = text.index(heading + "\n")
    end = text.find("\n" + level, start + len(heading))
    return text[start:] if end < 0 else text[start : end + 1]


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


# --- projects ----------------------------------------------------------------------------------


def _handbook(builder: EstateBuilder, shas: dict[str, str]) -> None:
    head = _tree("acme/handbook")
    credentials, faq = head["docs/credentials.md"], head["docs/faq.md"]
    ownership = _section(credentials, "## Who holds which credential")
    new_faq = _section(faq, "## How do I request a new repository?")
    repo = builder.project("acme/handbook")
    shas["handbook:initial"] = repo.commit(
        {
            **head,
            "docs/credentials.md": _cut(credentials, ownership),
            "docs/faq.md": _cut(faq, "\n" + new_faq),
        },
        "Start the engineering handbook",
    )
    # Inserting a section above "Rotating deploy keys" moves its lines: the pinned-sha case.
    shas["handbook:ownership"] = repo.commit(
        {"docs/credentials.md": credentials}, "List who holds which credential"
    )
    shas["handbook:head"] = repo.commit(
        {"docs/faq.md": faq}, "Answer how to request a new repository"
    )


_ALLOCATE_HEAD = """    if parts < 1:
        raise ValueError("parts must be at least 1")
    cents = int(to_cents(total) / CENT)
    quotient, leftover = divmod(cents, parts)
    # The first ``leftover`` parts carry one extra cent each, so no part differs by more than one.
    return [CENT * (quotient + (1 if i < leftover else 0)) for i in range(parts)]
"""
_ALLOCATE_FIRST = """    share = to_cents(total / parts)
    shares = [share] * (parts - 1)
    return shares + [total - share * (parts - 1)]
"""
# Every line differs from both the first version and the head version: the superseded commit.
_ALLOCATE_SUPERSEDED = """    base = to_cents(total / parts)
    remainder = total - base * parts
    return [base + remainder] + [base] * (parts - 1)
"""
_BALANCE_CHECK = '''def check_balanced(lines: list[JournalLine]) -> None:
    """Raise UnbalancedEntry unless debits equal credits in every currency."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for line in lines:
        totals[line.currency] += line.amount if line.side == "debit" else -line.amount
    unbalanced = sorted(currency for currency, total in totals.items() if total != 0)
    if unbalanced:
        raise UnbalancedEntry(f"entry does not balance in {', '.join(unbalanced)}")


'''
_RATE_CACHE = '''

_CACHE: dict[tuple[str, str], tuple[float, Decimal]] = {}
CACHE_SECONDS = 24 * 60 * 60


def cached_rate(source: str, target: str, table: RateTable) -> Decimal:
    """A conversion rate, kept for a day to spare the rate service."""
    now = time.monotonic()
    hit = _CACHE.get((source, target))
    if hit is None or now - hit[0] > CACHE_SECONDS:
        hit = (now, table.rate(source, target))
        _CACHE[(source, target)] = hit
    return hit[1]
'''


def _with_cache(rates: str) -> str:
    return _swap(rates, "from dataclasses", "import time\nfrom dataclasses") + _RATE_CACHE


def _ledger(builder: EstateBuilder, shas: dict[str, str]) -> None:
    head = _tree("acme/ledger")
    posting, rates = head["src/ledger/posting.py"], head["src/ledger/rates.py"]
    rounding, architecture = head["src/ledger/rounding.py"], head["docs/architecture.md"]
    export = posting[posting.index("\n\ndef export_csv") :]
    rules = _section(architecture, "## Posting rules")
    posting_v0 = _swap(
        _cut(_cut(_cut(posting, export), _BALANCE_CHECK), "    check_balanced(lines)\n"),
        "from collections import defaultdict\n",
        "",
    )
    repo = builder.project("acme/ledger")
    shas["ledger:initial"] = repo.commit(
        {
            **head,
            "src/ledger/posting.py": posting_v0,
            "src/ledger/rounding.py": _swap(rounding, _ALLOCATE_HEAD, _ALLOCATE_FIRST),
            "docs/architecture.md": _cut(architecture, "\n" + rules),
            "docs/migration-v1.md": _extra("acme/ledger", "docs/migration-v1.md"),
        },
        "Initial import of the ledger library",
    )
    posting_v1 = _cut(posting, export)
    shas["ledger:in_effect"] = repo.commit(
        {"src/ledger/posting.py": posting_v1}, "Reject unbalanced journal entries"
    )
    cached = _with_cache(rates)
    shas["ledger:reverted"] = repo.commit(
        {"src/ledger/rates.py": cached}, "Cache conversion rates for a day"
    )
    shas["ledger:superseded"] = repo.commit(
        {"src/ledger/rounding.py": _swap(rounding, _ALLOCATE_HEAD, _ALLOCATE_SUPERSEDED)},
        "Give the remainder of a split to the first share",
    )

    repo.branch("journal-export")
    shas["ledger:mr1_head"] = repo.commit(
        {"src/ledger/posting.py": posting}, "Export journal entries as CSV"
    )
    repo.checkout("main")
    shas["ledger:mr1_merge"] = repo.merge(
        "journal-export",
        "Merge branch 'journal-export' into 'main'\n\nExport journal entries as CSV\n\n"
        "See merge request acme/ledger!1",
    )
    repo.tag("v1.0.0")
    shas["ledger:v1.0.0"] = shas["ledger:mr1_merge"]

    repo.branch("spike/float-rates")
    shas["ledger:mr3_head"] = repo.commit(
        {
            "src/ledger/rates.py": _swap(
                cached, "rates: dict[str, Decimal]", "rates: dict[str, float]"
            )
        },
        "Store conversion rates as floats",
    )
    repo.checkout("main")
    repo.branch("feature/fx-rates")
    shas["ledger:unmerged"] = repo.commit(
        {"src/ledger/fx_sources.py": _extra("acme/ledger", "src/ledger/fx_sources.py")},
        "Read conversion rates from the central bank feed",
    )
    shas["ledger:mr4_head"] = shas["ledger:unmerged"]
    repo.checkout("main")

    shas["ledger:revert"] = repo.revert(shas["ledger:reverted"])
    shas["ledger:superseding"] = repo.commit(
        {"src/ledger/rounding.py": rounding}, "Spread the leftover cents of a split one at a time"
    )

    repo.branch("docs/posting-rules")
    first_rule = rules[: rules.index("- Entries are immutable")]
    repo.commit(
        {"docs/architecture.md": _swap(architecture, rules, first_rule)},
        "Write down the posting rules",
    )
    shas["ledger:mr2_head"] = repo.commit(
        {"docs/architecture.md": architecture}, "Add the rules for corrections and closed accounts"
    )
    repo.checkout("main")
    shas["ledger:mr2_squash"] = repo.squash("docs/posting-rules", "Document the posting rules")

    shas["ledger:deleted_file"] = repo.commit(
        {"docs/migration-v1.md": None}, "Remove the v1 migration notes"
    )
    shas["ledger:head"] = repo.sha()

    builder.merge_request(
        "acme/ledger", 1, state="merged", source_branch="journal-export", target_branch="main",
        sha=shas["ledger:mr1_head"], merge_commit_sha=shas["ledger:mr1_merge"],
    )  # fmt: skip
    builder.merge_request(
        "acme/ledger", 2, state="merged", source_branch="docs/posting-rules", target_branch="main",
        sha=shas["ledger:mr2_head"], squash_commit_sha=shas["ledger:mr2_squash"],
    )  # fmt: skip
    builder.merge_request(
        "acme/ledger", 3, state="closed", source_branch="spike/float-rates", target_branch="main",
        sha=shas["ledger:mr3_head"],
    )  # fmt: skip
    builder.merge_request(
        "acme/ledger", 4, state="opened", source_branch="feature/fx-rates", target_branch="main",
        sha=shas["ledger:mr4_head"],
    )  # fmt: skip


def _small_projects(builder: EstateBuilder, shas: dict[str, str]) -> None:
    for path, name, options in (
        ("acme/secrets", "secrets", {"visibility": "private"}),
        ("acme/infra", "infra", {}),
        ("acme/legacy", "legacy", {"archived": True}),
        ("acme/platform/gateway", "gateway", {}),
    ):
        repo: Repo = builder.project(path, **options)
        shas[f"{name}:head"] = repo.commit(_tree(path), f"Add the {name} documentation")


# --- issues ------------------------------------------------------------------------------------


def _issues(
    builder: EstateBuilder, shas: dict[str, str], canary: str | None, url: str
) -> dict[str, Case]:
    cases = {c.name: c for c in _cases(shas, url)}
    texts = {name: c.text for name, c in cases.items()}

    def fill(text: str) -> str:
        text = text.format_map(texts)
        return text if canary is None else f"{text}\n\n{canary}"

    issues = tomllib.loads(SOURCES.joinpath("_issues.toml").read_text(encoding="utf-8"))["issue"]
    for item in issues:
        builder.issue(
            item["project"],
            item["iid"],
            item["title"] if canary is None else f"{item['title']} {canary}",
            fill(item["description"]),
            updated_at=item["updated_at"],
            notes=[{**note, "body": fill(note["body"])} for note in item.get("notes", [])],
            state=item["state"],
        )
    return cases


def _cases(shas: dict[str, str], url: str) -> list[Case]:
    """Every planted reference; issue texts below name them as ``{name}`` placeholders."""
    short = {name: sha[:12] for name, sha in shas.items()}
    ledger, handbook = f"{url}/acme/ledger", f"{url}/acme/handbook"
    rates = _tree("acme/ledger")["src/ledger/rates.py"]
    posting = _tree("acme/ledger")["src/ledger/posting.py"]
    credentials = _tree("acme/handbook")["docs/credentials.md"]
    rate = _line_of(rates, "FX_RATE_PLACES = 6")
    # The feed branch forked while the (later reverted) cache stood, one import line longer.
    branch_rate = _line_of(_with_cache(rates), "FX_RATE_PLACES = 6")
    check = _line_of(posting, "def check_balanced")
    # The pinned URL cites "Rotating deploy keys" as it stood at handbook:initial; at the head the
    # same lines sit lower, after the ownership section.
    moved_by = _section(credentials, "## Who holds which credential").count("\n")
    rotate = (
        _line_of(credentials, "## Rotating deploy keys"),
        _line_of(credentials, "4. Remove the old public key"),
    )
    hb, lg = "acme/handbook", "acme/ledger"
    creds, rates_py, posting_py = (
        f"{hb}:docs/credentials.md",
        f"{lg}:src/ledger/rates.py",
        f"{lg}:src/ledger/posting.py",
    )
    return [
        # acme/handbook#1: how often deploy keys are rotated
        Case("docs_anchor_good", hb, 1, f"{DOCS_URL}credentials/#rotating-deploy-keys",
             "accepted", creds),
        Case("docs_anchor_bad", hb, 1, f"{DOCS_URL}credentials/#rotating-ssh-certificates",
             "resolves", creds),
        Case("file_pinned_moved", hb, 1,
             f"{handbook}/-/blob/{shas['handbook:initial']}/docs/credentials.md"
             f"#L{rotate[0] - moved_by}-{rotate[1] - moved_by}", "accepted", creds, rotate),
        Case("file_relative_link", hb, 1, "docs/credentials.md", "accepted", creds),
        Case("docs_off_topic", hb, 1, f"{DOCS_URL}on-call/#compensation", "addresses",
             f"{hb}:docs/on-call.md"),
        Case("system_note_commit", hb, 1, short["handbook:ownership"], "ignored"),
        # acme/handbook#2: onboarding and releases
        Case("docs_index_page", hb, 2, f"{DOCS_URL}onboarding/", "accepted",
             f"{hb}:docs/onboarding/index.md"),
        Case("file_relative_link_release", hb, 2, "docs/release-process.md", "accepted",
             f"{hb}:docs/release-process.md"),
        Case("docs_html_suffix", hb, 2, f"{DOCS_URL}release-process.html", "accepted",
             f"{hb}:docs/release-process.md"),
        Case("docs_missing_page", hb, 2, f"{DOCS_URL}security/", "resolves"),
        # acme/ledger#1: FX rounding, answered only by src/ledger/rates.py
        Case("file_bare_path_line", lg, 1, f"src/ledger/rates.py:{rate}", "accepted", rates_py,
             (rate, rate)),
        Case("file_blob_slashed_branch", lg, 1,
             f"{ledger}/-/blob/feature/fx-rates/src/ledger/rates.py#L{branch_rate}", "accepted",
             rates_py, (rate, rate)),
        Case("file_only_on_branch", lg, 1,
             f"{ledger}/-/blob/feature/fx-rates/src/ledger/fx_sources.py#L11", "resolves",
             f"{lg}:src/ledger/fx_sources.py"),
        Case("commit_unmerged_branch", lg, 1, f"acme/ledger@{short['ledger:unmerged']}",
             "resolves"),
        Case("mr_opened", lg, 1, "!4", "resolves"),
        # acme/ledger#2: posting rejects balanced entries
        Case("file_bare_path_line_posting", lg, 2, f"src/ledger/posting.py:{check}", "accepted",
             posting_py, (check, check)),
        Case("commit_bare_sha", lg, 2, short["ledger:in_effect"], "accepted"),
        Case("file_relative_link_posting", lg, 2, "docs/architecture.md", "accepted",
             f"{lg}:docs/architecture.md"),
        Case("mr_url_diffs", lg, 2, f"{ledger}/-/merge_requests/2/diffs", "accepted"),
        Case("commit_project_at_sha", lg, 2, f"acme/ledger@{short['ledger:mr2_squash']}",
             "accepted"),
        Case("mr_merged_merge_commit", lg, 2, "!1", "accepted"),
        Case("mr_squash_merged", lg, 2, "!2", "accepted"),
        Case("file_line_past_end", lg, 2, "src/ledger/posting.py:900", "resolves", posting_py),
        # acme/ledger#3: history that no longer holds
        Case("commit_reverted", lg, 3, f"{ledger}/-/commit/{shas['ledger:reverted']}",
             "resolves"),
        Case("commit_superseded", lg, 3, short["ledger:superseded"], "resolves"),
        Case("commit_url", lg, 3, f"{ledger}/-/commit/{shas['ledger:superseding']}", "accepted"),
        Case("mr_closed", lg, 3, "!3", "resolves"),
        Case("file_deleted", lg, 3,
             f"{ledger}/-/blob/{shas['ledger:initial']}/docs/migration-v1.md#L6-11", "resolves",
             f"{lg}:docs/migration-v1.md"),
        # acme/ledger#4: targets outside the corpus, and references that are never followed
        Case("private_project", lg, 4, f"{url}/acme/secrets/-/blob/main/docs/vault.md",
             "corpus_rules"),
        Case("private_project_mr", lg, 4, "acme/secrets!1", "corpus_rules"),
        Case("excluded_project", lg, 4, f"{url}/acme/infra/-/blob/main/docs/terraform.md#L3",
             "corpus_rules"),
        Case("archived_project", lg, 4, f"{url}/acme/legacy/-/blob/main/docs/old-deploy.md",
             "corpus_rules"),
        Case("outside_group", lg, 4, f"{url}/globex/tools/-/blob/main/README.md",
             "corpus_rules"),
        Case("other_host", lg, 4, "https://github.com/acme/ledger/blob/main/docs/architecture.md",
             "ignored"),
        Case("issue_ref_short", lg, 4, "#5", "ignored"),
        Case("issue_ref_full", lg, 4, "acme/handbook#5", "ignored"),
        Case("issue_url", lg, 4, f"{ledger}/-/issues/5", "ignored"),
        Case("work_item_url", lg, 4, f"{url}/groups/acme/-/work_items/7", "ignored"),
        # acme/ledger#5: a project in a subgroup
        Case("subgroup_project", lg, 5,
             f"{url}/acme/platform/gateway/-/blob/main/docs/timeouts.md#L3", "accepted",
             "acme/platform/gateway:docs/timeouts.md", (3, 3)),
        # acme/secrets#1: an issue in a private project is never read
        Case("issue_in_private_project", "acme/secrets", 1,
             f"{handbook}/-/blob/main/docs/credentials.md", "ignored"),
    ]  # fmt: skip
