"""Verdicts and references as the store keeps them (JSON columns), and back."""

from __future__ import annotations

import dataclasses
import json

from scout.store import NewSignpost
from signposts.references import Reference
from signposts.validate import Verdict


def reference_json(reference: Reference) -> str:
    return json.dumps(dataclasses.asdict(reference), sort_keys=True)


def reference_from_json(text: str) -> Reference:
    data = json.loads(text)
    if data.get("lines") is not None:
        data["lines"] = tuple(data["lines"])
    return Reference(**data)


def new_signpost(verdict: Verdict) -> NewSignpost:
    return NewSignpost(
        kind=verdict.reference.kind,
        reference=verdict.reference.reference,
        status=verdict.status,
        check_name=verdict.check,
        reason=verdict.reason,
        target_project=verdict.target_project,
        target_path=verdict.target_path,
        target_lines=verdict.target_lines,
        target_sha=verdict.target_sha,
        target=verdict.target,
        reference_json=reference_json(verdict.reference),
        checks=json.dumps(verdict.checks_json()),
        checked_at=verdict.checked_at,
    )
