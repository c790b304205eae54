"""Re-validation of stored verdicts against the current heads (``scout signposts recheck``).

Only corpus rules and resolves can run again: the addresses judgement needs the issue's question,
which is not stored (docs/design.md, invariant 1). So an accepted verdict keeps its addresses
judgement while its target holds, a withdrawn one is reinstated once its target holds again, and a
verdict never accepted is reported, not stored: its issue's next change re-judges it in full. The
exception is a ``cannot check:`` rejection (a check that could not complete, or an issue passed
after failing three sweeps): it judged nothing, so a definite rejection found now is stored in its
place.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from scout.config import Config
from scout.errors import ForgeError, Unreadable
from scout.forge.base import Forge
from scout.providers import configured_provider
from scout.store import SignpostRow, Store
from scout.verdict import Check, Kind, Status
from signposts import audit
from signposts.references import Reference
from signposts.validate import CANNOT_CHECK, Validator


@dataclass(frozen=True)
class Outcome:
    """A verdict's state before or after a re-check."""

    status: Status
    check: Check | None
    reason: str
    sha: str | None


@dataclass(frozen=True)
class IssueRef:
    project: str
    iid: int
    url: str


@dataclass(frozen=True)
class Change:
    """One verdict whose outcome changed; ``stored`` is False for a change only reported."""

    id: int
    kind: Kind
    reference: str
    issue: IssueRef
    before: Outcome
    after: Outcome
    stored: bool


@dataclass(frozen=True)
class Recheck:
    """What ``scout signposts recheck`` found: how many verdicts, and which changed."""

    rechecked: int
    changed: list[Change]


def _outcome(status: Status, check: Check | None, reason: str, sha: str | None) -> Outcome:
    return Outcome(status, check, reason, sha)


def _same(before: Outcome, after: Outcome) -> bool:
    """No change worth reporting: same status and check, an accepted target read at the same sha,
    a rejection for the same class of reason (its text names the head, which moves)."""
    if (before.status, before.check) != (after.status, after.check):
        return False
    if after.status == Status.ACCEPTED:
        return before.sha == after.sha
    return audit.reason_class(before.reason) == audit.reason_class(after.reason)


def recheck_one(
    store: Store, validator: Validator, row: SignpostRow, *, rewrite: bool = False
) -> Change | None:
    """Re-validate one verdict; store it when it changed and was ever accepted. None: unchanged.

    ``rewrite``: an accepted target's passages are written again even when its verdict holds
    unchanged (after a change of rules or of how files become passages, which may cut the same
    file differently).

    Only corpus rules and resolves can be run again: the addresses judgement needs the issue's
    question, which is not stored (docs/design.md, invariant 1). So an accepted verdict keeps its
    addresses judgement while its target holds, a withdrawn one is reinstated once its target holds
    again, and a verdict never accepted is reported, not stored: its issue's next change re-judges
    it.
    """
    verdict = validator.recheck(Reference.from_store(row.reference_json))
    before = _outcome(row.state, row.check_name, row.reason, row.target_sha)
    if row.status == "accepted" or row.withdrawn_at:
        new = verdict
        if new.accepted and row.status == "accepted":
            kept = tuple(c for c in row.verdict().checks if c.check == Check.ADDRESSES)
            new = dataclasses.replace(new, reason=row.reason, checks=new.checks + kept)
        state = Status.ACCEPTED if new.accepted else Status.WITHDRAWN
        after = _outcome(state, new.check, new.reason, new.target_sha)
        if _same(before, after) and (state != "accepted" or new.target == row.target):
            if rewrite and new.accepted:
                store.revalidated(row.id, new, verdict.passages)
            return None
        store.revalidated(row.id, new, verdict.passages)
        stored = True
    else:
        if verdict.accepted:
            if row.check_name == Check.ADDRESSES:
                return None
            after = _outcome(
                Status.REJECTED,
                Check.ADDRESSES,
                f"now resolves ({verdict.reason}); not judged against the issue's question "
                "until the issue next changes",
                verdict.target_sha,
            )
        else:
            after = _outcome(Status.REJECTED, verdict.check, verdict.reason, verdict.target_sha)
        if _same(before, after):
            return None
        # A check that could not complete judged nothing: a definite rejection now replaces it.
        stored = row.reason.startswith(CANNOT_CHECK) and verdict.status == Status.REJECTED
        if stored:
            store.revalidated(row.id, verdict, [], withdraw=False)
    issue = IssueRef(row.issue_project, row.issue_iid, row.issue_url)
    return Change(row.id, row.kind, row.reference, issue, before, after, stored)


def recheck_verdicts(
    config: Config, forge: Forge, store: Store, rows: list[SignpostRow]
) -> Recheck:
    """Re-validate ``rows`` against the current heads; what changed, in ``rows`` order."""
    from scout.corpus.rules import CorpusRules
    from scout.forge.cached import CachedForge

    provider = configured_provider(config)
    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    validator = Validator(CachedForge(forge), rules, provider, config.docs_site)
    changed: list[Change] = []
    failed: dict[str, str] = {}
    for row in rows:
        project = row.target_project or "?"
        if project in failed:
            continue
        try:
            change = recheck_one(store, validator, row)
        except ForgeError as exc:
            # A project that cannot be read is a fault, not a verdict: its verdicts stay as they
            # are, the others are checked, and the command fails naming it.
            if exc.reason in ("unreachable", "rate limited"):
                raise
            failed[project] = str(exc).removeprefix("forge ")
            continue
        if change is not None:
            changed.append(change)
    if failed:
        names = "; ".join(f"{p} ({why})" for p, why in sorted(failed.items()))
        raise Unreadable(
            f"rechecked the others ({len(changed)} changed), but could not read {names}: "
            "their verdicts are kept"
        )
    return Recheck(len(rows), changed)


INDEX_RULES_SETTING = "index_rules"  # the corpus rules rule-withdrawn signposts were judged by


def rejudge_rule_withdrawals(config: Config, forge: Forge, store: Store) -> int:
    """Judge again the signposts the corpus rules withdrew, once the rules have changed since
    (``scout index`` and the worker call this after indexing); how many were reinstated.

    A rule that kept a target out and is taken back (an exclusion removed, a visibility added)
    must bring its signposts back without waiting for the target's head to move. Each is
    re-validated in full against the current head (corpus rules, then resolves), as ``scout
    signposts recheck`` does; while the rules stay the same, nothing is re-read.
    """
    from scout.corpus.rules import CorpusRules
    from scout.forge.cached import CachedForge
    from scout.providers import make_provider

    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    if store.setting(INDEX_RULES_SETTING) == rules.fingerprint:
        return 0
    rows = [
        row
        for row in store.signposts(status="rejected", check="corpus_rules", withdrawn=True)
        if row.target_project
        and rules.group(row.target_project)
        and (row.target_path is None or rules.path(row.target_path))
    ]
    reinstated = 0
    if rows:
        provider = make_provider(config.answer.provider, model=config.answer.model)
        validator = Validator(CachedForge(forge), rules, provider, config.docs_site)
        for row in rows:
            change = recheck_one(store, validator, row)
            if change is not None and change.after.status == Status.ACCEPTED:
                reinstated += 1
    store.set_setting(INDEX_RULES_SETTING, rules.fingerprint)
    return reinstated
