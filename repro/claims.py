"""The register of claims: each finding's declaration (kind, claim, thresholds,
requirements, expected flag, the major that changed it) as it was fixed, and every
revision of it, with its date, the old and the new declaration, and why.

A claim must be fixed before the runs that judge it. So a finding's declaration in
findings.py must equal its registered one (tests/test_claims.py fails otherwise), a
change is registered as a revision (`python -m repro register NAME --why "..."`), and
the history on the pages ("held in k of n runs") counts only runs that started after a
finding's latest revision: the runs that led to a revision never count for it.

The register is `registered.json` in the chapter's package. It is not part of the
experiment's key: a revision re-judges stored results, it does not re-measure.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import results
from .chapter import Chapter
from .errors import ReproError
from .verdict import Finding

FILE = "registered.json"
FIELDS = ("kind", "claim", "claim_ja", "holds_if", "requires", "expected", "changed_in")


def declaration(f: Finding) -> dict[str, Any]:
    """What a finding claims, as the register keeps it (English, and the claim in Japanese)."""
    return {"kind": f.kind, "claim": f.claim.en, "claim_ja": f.claim.ja,
            "holds_if": [c.text().en for c in f.checks],
            "requires": [r.label.en for r in f.requires], "expected": f.expected,
            "changed_in": (f"{f.changed_in.major} ({f.changed_in.cite})" if f.changed_in else None)}


def path(chapter: Chapter) -> Path:
    return chapter.package / FILE


def load(chapter: Chapter) -> dict[str, Any]:
    try:
        return json.loads(path(chapter).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise ReproError(f"{path(chapter)} is not a readable register: {exc}") from exc


def differences(chapter: Chapter) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Per finding whose declaration differs from the register: {field: (registered, now)};
    a finding not registered yet has every field differ from None."""
    register = load(chapter)
    found = {}
    for f in chapter.findings:
        now, old = declaration(f), register.get(f.id, {})
        changed = {k: (old.get(k), now[k]) for k in FIELDS if old.get(k) != now[k]}
        if changed:
            found[f.id] = changed
    return found


def register(chapter: Chapter, why: str, when: datetime | None = None) -> list[str]:
    """Record a revision for every finding whose declaration changed (a first registration
    for a new one); returns their ids. A finding dropped from findings.py stays in the
    register, marked withdrawn, so its history remains."""
    changed = differences(chapter)
    register_ = load(chapter)
    current = {f.id for f in chapter.findings}
    withdrawn = [k for k, v in register_.items() if k not in current and not v.get("withdrawn")]
    if (changed or withdrawn) and not why.strip():
        raise ReproError("say why the claims changed (--why)")
    stamp = (when or datetime.now(timezone.utc)).isoformat(timespec="minutes")
    for f in chapter.findings:
        if f.id not in changed:
            continue
        entry = register_.setdefault(f.id, {"revisions": []})
        first = not entry["revisions"]
        entry["revisions"].append({
            "date": stamp, "what": "registered" if first else "revised",
            "old": None if first else {k: old for k, (old, _) in changed[f.id].items()},
            "new": {k: new for k, (_, new) in changed[f.id].items()}, "why": why})
        entry.update(declaration(f))
    for k in withdrawn:
        register_[k]["withdrawn"] = True
        register_[k]["revisions"].append({"date": stamp, "what": "withdrawn", "old": None,
                                           "new": None, "why": why})
    _write(path(chapter), register_)
    return sorted(changed) + withdrawn


def _write(target: Path, data: dict[str, Any]) -> None:
    results.write_atomically(target, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def revisions(chapter: Chapter, fid: str) -> list[dict[str, Any]]:
    return load(chapter).get(fid, {}).get("revisions", [])


def counted_since(chapter: Chapter, fid: str) -> str | None:
    """The time of the finding's latest revision: only runs that started after it count."""
    found = revisions(chapter, fid)
    return found[-1]["date"] if found else None
