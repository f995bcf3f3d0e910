"""The register's revisions of a chapter's claims, as the findings table and the matrix
show them."""
from __future__ import annotations

from typing import Any

from docutils import nodes

from .. import claims
from .code_conditions import code_cell
from ..chapter import Chapter, Run, Table
from ..text import Text
from ..verdict_words import KIND
from . import store
from .expectations import after_text, row_id
from .nodes import details, details_summary, para, table_node
from .words import WORDS


REVISED_FIELDS = {"claim": Text("内容", "claim"), "claim_ja": Text("内容 (和文)", "claim (Japanese text)"),
                  "holds_if": Text("判定条件", "holds if"), "requires": Text("要件", "requires"),
                  "expected": Text("成立の期待", "expected to hold"), "kind": WORDS["kind"],
                  "changed_in": Text("変えたメジャー", "changed in"),
                  "measure": Text("測り方 (そのコードのフィンガープリント)", "how it is measured (its code's fingerprint)")}


YES_NO = {True: Text("期待する", "yes"), False: Text("期待しない", "no")}


def _revision_value(key: str, value: Any, lang: str) -> str:
    if key == "expected" and isinstance(value, bool):
        return YES_NO[value](lang)
    if key == "kind" and value in KIND:
        return KIND[value](lang)
    if key == "measure" and value:  # a fingerprint: its first digits tell old from new
        return f"#{value[:8]}"
    return plain(value)


def _revision_change(r: dict[str, Any], lang: str) -> str | None:
    """What a revision changed, in the page's language ("holds if: old → new; ..."); None
    when the Japanese page has no Japanese for it (a register from before why_ja)."""
    if lang == "ja" and r["new"] is not None:
        if r.get("new_ja") is None:
            return None
        old, new = r.get("old_ja") or {}, r["new_ja"]
        parts = []
        for k, v in new.items():
            before = old.get(k) if r.get("old_ja") else None
            if k == "claim" and before == v and "claim" in (r["old"] or {}):
                parts.append(f"{REVISED_FIELDS[k].ja}: 英文だけの修正 (和文は同じ)")
            else:
                parts.append(f"{REVISED_FIELDS[k].ja}: {_revision_value(k, before, lang)} → {_revision_value(k, v, lang)}")
        return "。".join(parts) or WORDS[r["what"]](lang)
    new = r["new"] or {}
    if set(new) == {"claim_ja"}:  # only the Japanese wording: the English page says so
        return Text("", "the claim's Japanese text (the English is unchanged)")(lang)
    return "; ".join(f"{REVISED_FIELDS.get(k, Text(k, k))(lang)}: "
                     f"{_revision_value(k, r['old'].get(k) if r['old'] else None, lang)} → {_revision_value(k, v, lang)}"
                     for k, v in new.items() if k != "claim_ja") or WORDS[r["what"]](lang)


FIRST = ("registered", "declared")  # a finding's first declaration, and the register's start
DECLARED_SHOWN = ("expected", "holds_if", "requires")  # what a first declaration's row shows


def _declared_change(r: dict[str, Any], lang: str) -> str | None:
    """A first declaration as its row shows it: the expected flag, thresholds and requirements
    (None when the Japanese page has no Japanese for them)."""
    new = r.get("new_ja") if lang == "ja" else r["new"]
    if new is None:
        return None
    parts = [f"{REVISED_FIELDS[k](lang)}: {_revision_value(k, new[k], lang)}" for k in DECLARED_SHOWN if k in new]
    return f"{WORDS['declared'](lang)}: " + ("。" if lang == "ja" else "; ").join(parts)


def _shown(r: dict[str, Any], index: int, set_flag: int | None) -> bool:
    """Every revision; a first declaration where it matters: the one that set a flag "not
    expected" the finding still has, or one made after runs (or at a time not recorded)."""
    if r["what"] not in FIRST:
        return True
    return index == set_flag or (r["what"] == "declared" and r.get("after") != claims.BEFORE_ANY_RUN)


def revisions_block(chapter: Chapter, lang: str) -> list[nodes.Node]:
    """The register's revisions of this chapter's claims (first declarations where they
    matter), in the page's language, each row with an id the notes link to; the English
    record stands in where a revision has no Japanese. Collapsed, with its count in its
    summary line: the record follows the answer, it does not push the Summary down (a link to
    a row opens it)."""
    rows: list[list[Any]] = []
    ids: list[str] = []
    first = None
    english = False  # some row of the Japanese page shows the English record
    register = claims.load(chapter)
    expected = {f.id: f.expected for f in chapter.findings}
    for fid, entry in sorted(register.items(), key=lambda kv: finding_order(kv[0])):
        flag = expected.get(fid, entry.get("expected", True))
        set_flag = None if flag else claims.expectation(register, fid, flag).revision
        for i, r in enumerate(entry.get("revisions", [])):
            if r["what"] == "registered":
                first = min(first or r["date"], r["date"])
            if not _shown(r, i, set_flag):
                continue
            describe = _declared_change if r["what"] in FIRST else _revision_change
            change, why = describe(r, lang), r.get("why_ja") if lang == "ja" else r["why"]
            if change is None or not why:
                english = True
                change, why = change or describe(r, "en"), why or r["why"]
            rows.append([fid, r["date"][:10], after_text(r), code_cell(r, lang) or change, why])
            ids.append(row_id(chapter.name, fid, i))
    out: list[nodes.Node] = []
    if first:
        out.append(para(WORDS["registered"](lang).format(date=first[:10]), ["repro-table-note"]))
    if rows:
        record = details(classes=["repro-record"])
        line = details_summary()
        line += nodes.Text(RECORD(lang).format(n=len(rows)))
        record += line
        caption = Text("主張の改訂 (一部は英語の記録)" if english else "主張の改訂", "Revisions of the claims")
        table = Table(caption, [WORDS["finding"], Text("日付", "Date"), SEEN, Text("変更 (旧 → 新)", "Change (old → new)"),
                                WORDS["why"]], rows, REVISIONS_NOTE)
        built = table_node(table, lang, [6, 10, 11, 33, 40])
        built[0]["classes"].append("repro-revisions")
        for row, ident in zip(built[0].findall(nodes.row), [None, *ids]):  # the head's row first
            if ident:
                row["ids"].append(ident)
                row["names"].append(ident)
        record += built
        out.append(record)
    return out


RECORD = Text("主張の改訂 ({n} 件)", "Revisions of the claims ({n})")


SEEN = Text("それまでの実行", "Runs seen before")
REVISIONS_NOTE = Text("「それまでの実行」は、変更の時点で保存されていたこの章の実行の数です。知見の最初の宣言は、実行の後の"
                      "ものと、いまの「成立を期待しない」を決めたものだけを載せています。",
                      "\"Runs seen before\" counts the chapter's runs stored when the change was made. A finding's "
                      "first declaration is listed only where it came after runs, or set the \"expected to hold: "
                      "no\" it still has.")


def targets(found: list[nodes.Node], document: nodes.document) -> None:
    """Make the revisions' rows link targets (`expectations.expectation_note` links to them
    from any page)."""
    for node in found:
        for row in node.findall(nodes.row):
            if row["names"]:
                document.note_explicit_target(row)


def finding_order(fid: str) -> tuple[int, str]:
    digits = "".join(ch for ch in fid if ch.isdigit())
    return (int(digits) if digits else 0, fid)


def plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return " / ".join(map(str, value)) or "—"
    return str(value)


def revised_after_note(run: Run, fid: str, lang: str) -> list[nodes.Node]:
    """A note on a verdict whose claim was revised after its run (the run never counts)."""
    revised = store.revised_after(run, fid)
    return [para(WORDS["revised_after"](lang).format(date=revised[:10]), ["repro-reason"])] if revised else []
