"""The source publications as the site cites them: one entry per publication, gathered from the
chapters' original.toml files (a publication that feeds several chapters is listed in each,
identically), each with an ASCII anchor that is the same in both languages (`source-004`),
and a citation that names the publication and the table, figure or section and links to
that entry."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from docutils import nodes
from sphinx import addnodes

from .. import registry
from ..errors import ReproError
from ..text import Text


@dataclass(frozen=True)
class Source:
    """One publication: its [[sources]] entry and the chapters that reproduce it."""

    entry: dict[str, Any]
    chapters: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.entry["id"]

    @property
    def short(self) -> Text:
        """How a citation names it ("PGECons WG1 report for fiscal 2017")."""
        return Text(**self.entry["short"])


def sources() -> dict[str, Source]:
    """Every source by its id, in id order. A publication listed by several chapters must be
    listed the same way in each: one entry would otherwise hide the other's corrections."""
    entries: dict[str, dict[str, Any]] = {}
    chapters: dict[str, list[str]] = {}
    for name, chapter in registry.chapters().items():
        for entry in chapter.original.get("sources", []):
            ident = entry["id"]
            if not entry.get("short") or not (entry.get("url") or entry.get("no_url")):
                raise ReproError(f"source {ident} in {name}'s original.toml: give its short name in citations "
                                 "(short = { ja, en }) and its address (url) or why it has none (no_url = { ja, en })")
            if entries.setdefault(ident, entry) != entry:
                raise ReproError(f"source {ident}: {name}'s original.toml lists it unlike "
                                 f"{chapters[ident][0]}'s; give every chapter the same entry")
            chapters.setdefault(ident, []).append(name)
    return {i: Source(entries[i], tuple(chapters[i])) for i in sorted(entries)}


def anchor(ident: str) -> str:
    """The id of a source's entry on the sources page: ASCII, the same in both languages."""
    return f"source-{ident}"


def citation(ident: str, where: Text | None, lang: str, numbered: bool = False) -> addnodes.pending_xref:
    """A link to the source's entry that names the publication and, when given, the table,
    figure or section ("PGECons WG1 report for fiscal 2017, section 9.4.1, table 9.3");
    `numbered` puts the source's number first, for a sentence about that number ("004
    (PGECons WG1 report for fiscal 2017)")."""
    try:
        source = sources()[ident]
    except KeyError:
        raise ReproError(f"no source {ident!r} in any original.toml (known: {', '.join(sources())})") from None
    text = source.short(lang) + (("、" if lang == "ja" else ", ") + where(lang) if where else "")
    if numbered:
        text = f"{ident} ({text})"
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=anchor(ident),
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text=text, classes=["repro-cite"])
    return ref
