"""The register of claims: each finding's declaration (kind, claim, thresholds,
requirements, expected flag, the major that changed it, and the fingerprint of the code
that computes its measures: repro/fingerprint.py) as it was fixed, and every
revision of it, with its date, the old and the new declaration, and why.

A claim must be fixed before the runs that judge it. So a finding's declaration in
findings.py must equal its registered one (tests/test_claims.py fails otherwise), a
change is registered as a revision (`python -m repro register NAME --why "..."`, with the
reason in Japanese too: `claims.register(..., why_ja=...)`), and
the history on the pages ("held in k of n runs") counts only runs that started after a
finding's latest revision: the runs that led to a revision never count for it.

The register is `registered.json` in the chapter's package. It is not part of the
experiment's key: a revision re-judges stored results, it does not re-measure.

The register is kept in English, with the claim in Japanese (`claim_ja`); each entry also
keeps the Japanese of its thresholds and requirements as they were at its last
registration (`holds_if_ja`, `requires_ja`: not compared, only shown), so that a revision
can say in both languages what changed: `old_ja`/`new_ja` beside `old`/`new` (the same
fields, `claim` holding the Japanese claim) and `why_ja` beside `why`.

Every entry also says what had been run when it was made (`after`: the stored result files of
the chapter that existed then, [] before any run, or a sentence where the runs were not
stored) and, where they were stored, how many of them had judged the finding contradicted
(`contradicted`, by their own verdicts: the record says it, so no page reads git for it). Changes made before the register began (on 2026-11-25) were reconstructed from the
project's history by scripts/audit_revisions.py: a finding's first appearance is a
"declared" entry, a later change a "revised" one, each with `reconstructed` naming the commit
that made it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import fingerprint, results, sizes
from .chapter import Chapter
from .errors import ReproError
from .verdict import CONTRADICTED, Finding

FILE = "registered.json"
FIELDS = ("kind", "claim", "claim_ja", "holds_if", "requires", "expected", "changed_in", "measure")
JA = {"claim": "claim_ja", "claim_ja": "claim_ja", "holds_if": "holds_if_ja", "requires": "requires_ja"}


def declaration(f: Finding) -> dict[str, Any]:
    """What a finding claims, as the register keeps it (English, and the claim in Japanese)."""
    return {"kind": f.kind, "claim": f.claim.en, "claim_ja": f.claim.ja,
            "holds_if": [c.text().en for c in f.checks],
            "requires": [r.label.en for r in f.requires], "expected": f.expected,
            "changed_in": (f"{f.changed_in.major} ({f.changed_in.cite})" if f.changed_in else None),
            "measure": fingerprint.of(f)}


def declaration_ja(f: Finding) -> dict[str, Any]:
    """The Japanese of a declaration's texts, kept beside it (not compared: shown only)."""
    return {"claim_ja": f.claim.ja, "holds_if_ja": [c.text().ja for c in f.checks],
            "requires_ja": [r.label.ja for r in f.requires]}


def in_japanese(fields: dict[str, Any], japanese: dict[str, Any]) -> dict[str, Any] | None:
    """A revision's `old` or `new` fields in Japanese: texts from `japanese` (an entry or a
    declaration_ja), the rest (kind, expected flag, major) as they are; `claim` and
    `claim_ja` both become `claim`. None when a text's Japanese is not known."""
    out: dict[str, Any] = {}
    for k, v in fields.items():
        if k in JA:
            if japanese.get(JA[k]) is None:
                return None
            out["claim" if k == "claim_ja" else k] = japanese[JA[k]]
        else:
            out[k] = v
    return out


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


def register(chapter: Chapter, why: str, when: datetime | None = None, why_ja: str | None = None) -> list[str]:
    """Record a revision for every finding whose declaration changed (a first registration
    for a new one), with why (and why_ja, the reason in Japanese, when given); returns
    their ids. A finding dropped from findings.py stays in the register, marked withdrawn,
    so its history remains."""
    changed = differences(chapter)
    register_ = load(chapter)
    current = {f.id for f in chapter.findings}
    withdrawn = [k for k, v in register_.items() if k not in current and not v.get("withdrawn")]
    if (changed or withdrawn) and not why.strip():
        raise ReproError("say why the claims changed (--why)")
    if why_ja is not None and not why_ja.strip():
        raise ReproError("the reason in Japanese is empty (--why-ja)")
    reason = {"why": why, **({"why_ja": why_ja} if why_ja else {})}
    now = when or datetime.now(timezone.utc)
    stamp = now.isoformat(timespec="minutes")
    reason["after"] = runs_before(chapter, now)
    seen = judged_before(chapter, now)
    for f in chapter.findings:
        if f.id not in changed:
            continue
        entry = register_.setdefault(f.id, {"revisions": []})
        first = not entry["revisions"]
        old = None if first else {k: old for k, (old, _) in changed[f.id].items()}
        new = {k: new for k, (_, new) in changed[f.id].items()}
        revision = {"date": stamp, "what": "registered" if first else "revised", "old": old, "new": new,
                    **reason, "contradicted": sum(v.get(f.id) == CONTRADICTED for v in seen)}
        new_ja = in_japanese(new, declaration_ja(f))
        old_ja = None if old is None else in_japanese(old, entry)
        if new_ja is not None and (old is None or old_ja is not None):
            revision |= {"old_ja": old_ja, "new_ja": new_ja}
        entry["revisions"].append(revision)
        entry.update(declaration(f))
    for f in chapter.findings:  # the Japanese as it stands (also where only it changed)
        if f.id in register_:
            register_[f.id].update(declaration_ja(f))
    for k in withdrawn:
        register_[k]["withdrawn"] = True
        register_[k]["revisions"].append({"date": stamp, "what": "withdrawn", "old": None,
                                           "new": None, **reason})
    _write(path(chapter), register_)
    return sorted(changed) + withdrawn


def runs_before(chapter: Chapter, when: datetime) -> list[str]:
    """The chapter's stored result files that started before `when` (relative to the
    repository): the runs that had been seen when a claim was fixed or changed."""
    return sorted(_relative(path) for path, doc in results.files(chapter.name, build=False)
                  if datetime.fromisoformat(doc["provenance"]["started"]) < when)


def judged_before(chapter: Chapter, when: datetime) -> list[dict[str, str]]:
    """How each stored run that started before `when` judged the findings (id -> status), as
    it recorded them: a revision counts the runs that had contradicted a finding by then."""
    return [{v["id"]: v["status"] for v in doc.get("verdicts", [])}
            for _, doc in results.files(chapter.name, build=False)
            if datetime.fromisoformat(doc["provenance"]["started"]) < when]


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(results.ROOT))
    except ValueError:  # a folder of results gathered elsewhere (RESULTS=...)
        return str(path)


def _write(target: Path, data: dict[str, Any]) -> None:
    results.write_atomically(target, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def size_differences(chapter: Chapter) -> dict[str, tuple[Any, Any]]:
    """Per finding whose declared size (sizes.toml) differs from the registered one:
    (registered, now)."""
    register_, declared = load(chapter), {k: v.as_dict() for k, v in sizes.parse(chapter).items()}
    return {fid: (register_.get(fid, {}).get("size", {}).get("declared"), declared.get(fid))
            for fid in sorted(set(declared) | {k for k, v in register_.items() if "size" in v})
            if register_.get(fid, {}).get("size", {}).get("declared") != declared.get(fid)}


def register_sizes(chapter: Chapter, why: str = "", when: datetime | None = None) -> list[str]:
    """Register the chapter's declared sizes with their date (only later runs count for a
    magnitude verdict); a changed one keeps the old beside it and needs a reason."""
    changed = size_differences(chapter)
    register_ = load(chapter)
    if any(old is not None for old, _ in changed.values()) and not why.strip():
        raise ReproError("say why the sizes changed (--why)")
    stamp = (when or datetime.now(timezone.utc)).isoformat(timespec="minutes")
    for fid, (old, new) in changed.items():
        entry = register_.setdefault(fid, {"revisions": []})
        if old is not None:
            entry.setdefault("size_revisions", []).append({**entry["size"], "replaced": stamp, "why": why})
        entry["size"] = {"date": stamp, "declared": new}
    if changed:
        _write(path(chapter), register_)
    return sorted(changed)


def size_since(register: dict[str, Any], fid: str) -> str | None:
    """When the finding's size was registered (in a loaded register): only runs that started
    after it count."""
    return register.get(fid, {}).get("size", {}).get("date")


def revisions(chapter: Chapter, fid: str) -> list[dict[str, Any]]:
    return load(chapter).get(fid, {}).get("revisions", [])


def counted_since(chapter: Chapter, fid: str) -> str | None:
    """The time of the finding's latest revision: only runs that started after it count."""
    return max((r["date"] for r in revisions(chapter, fid)), default=None)


BEFORE_ANY_RUN: list[str] = []  # a revision's "after" when no run of the chapter existed yet


@dataclass(frozen=True)
class Expectation:
    """When a finding's expected flag took the value it has now, and what had been run by
    then: a "not expected to hold here" set before any run is a prediction; set after runs,
    it is a change of mind, and the record names those runs.

    `after` is the revision's record of the runs seen before it: a list of stored result
    files ([] before any run), a sentence when the runs were not stored (e.g. "runs not
    stored, as commit abc1234 says"), or None where the register has no such record;
    `contradicted`, how many of those stored runs had judged the finding contradicted;
    `unstored_contradicted`, how many runs that were not stored (a CI run) had, as its reason
    says."""
    expected: bool
    since: str | None
    after: list[str] | str | None
    revision: int | None  # the index, in the finding's revisions, of the entry that set it
    contradicted: int | None = None
    unstored_contradicted: int = 0

    @property
    def before_runs(self) -> bool | None:
        """True: set before any run; False: after runs; None: the register does not say."""
        if self.after is None:
            return None
        return self.after == BEFORE_ANY_RUN

    @property
    def runs_before(self) -> int | None:
        """How many stored runs preceded it (None when they were not stored or not recorded)."""
        return len(self.after) if isinstance(self.after, list) else None


def expectation(register: dict[str, Any], fid: str, expected: bool) -> Expectation:
    """The entry of the finding's revisions (in a loaded register) that last changed its
    expected flag to `expected`, the value it has now."""
    found, value = None, None
    entries = register.get(fid, {}).get("revisions", [])
    for i, r in sorted(enumerate(entries), key=lambda ir: ir[1]["date"]):
        new = r.get("new") or {}
        if "expected" in new and new["expected"] != value:
            value, found = new["expected"], (i, r)
    if value != expected or found is None:  # the register does not know the current flag yet
        return Expectation(expected, None, None, None)
    i, r = found
    return Expectation(expected, r["date"], r.get("after"), i, r.get("contradicted"),
                       r.get("unstored_contradicted", 0))
