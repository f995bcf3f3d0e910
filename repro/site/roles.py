"""Inline roles: a measured number ({repro-num}`chapter:key`), a citation of a source
({repro-source}`004`, {repro-source}`表 9.3 <004>`) and the repository's address
({repro-repository}`text`)."""
from __future__ import annotations

import os
import re
import subprocess

from docutils import nodes
from sphinx.util.docutils import SphinxRole

from .. import registry, results
from ..chapter import Chapter, Run
from ..errors import ReproError
from ..text import Number, Text
from . import store
from .nodes import lang_of, pooled_note
from .sources import citation
from .words import WORDS


class SourceRole(SphinxRole):
    """{repro-source}`004`: the source's number and name ("004 (PGECons WG1 report for fiscal
    2017)"); {repro-source}`表 9.3 <004>`: its name and the table, figure or section, in the
    page's language ("PGECons WG1 report for fiscal 2017, table 9.3"). Both link to the
    source's entry on the sources page."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        text = self.text.strip()
        m = re.fullmatch(r"(?s)(.*?)\s*<(\w+)>", text)
        where, ident = (m[1], m[2]) if m else ("", text)
        for chapter in registry.chapters().values():
            self.env.note_dependency(str(chapter.package / "original.toml"))
        try:
            return [citation(ident, Text(where, where) if where else None, lang_of(self.env),
                             numbered=not where)], []
        except ReproError as exc:
            return [], [self.inliner.reporter.error(str(exc), line=self.lineno)]


def run_numbers(chapter: Chapter, run: Run) -> dict[str, Number]:
    """The numbers a page may cite: the chapter's own, and the machine's CPU count (`cpus`)
    and the rounds the run's conditions got at least and at most (`rounds`, `max_rounds`)."""
    counts = [run.rounds.count(c) for c in run.rounds.conditions()]
    machine = {"cpus": Number(run.doc["provenance"]["host"].get("engine_cpus"), "", 0),
               "rounds": Number(min(counts, default=None), "", 0),
               "max_rounds": Number(max(counts, default=None), "", 0)}
    return machine | chapter.numbers(run)


class NumberRole(SphinxRole):
    """{repro-num}`chapter:key`: a measured number, formatted for the page's language."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        name, _, key = self.text.partition(":")
        chapter = registry.get(name)
        for path in store.watched(name):
            self.env.note_dependency(str(path))
        shown = store.current(name, self.config.repro_major, self.config.repro_scale)
        if shown.run is None or "unavailable" in shown.run.doc:
            return [nodes.inline(text="—")], []
        numbers = run_numbers(chapter, shown.run)
        if key not in numbers:
            msg = self.inliner.reporter.error(f"{name} has no number {key!r}", line=self.lineno)
            return [], [msg]
        number, lang = numbers[key], lang_of(self.env)
        shown: list[nodes.Node] = [nodes.inline(text=number.format(lang), classes=["repro-num"])]
        if note := pooled_note(number, lang):  # pooled: the text says so, as tables do
            shown.append(nodes.inline(text=f" ({note})", classes=["repro-pooled"]))
        return shown, []


def repository() -> str:
    """The repository's public address: REPRO_REPOSITORY, GitHub Actions' repository, or the
    clone's origin (empty when none is known)."""
    if url := os.environ.get("REPRO_REPOSITORY"):
        return url
    if os.environ.get("GITHUB_REPOSITORY"):
        return f"{os.environ.get('GITHUB_SERVER_URL', 'https://github.com')}/{os.environ['GITHUB_REPOSITORY']}"
    try:
        origin = subprocess.run(["git", "remote", "get-url", "origin"], cwd=results.ROOT,
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return origin if origin.startswith(("https://", "http://")) else ""


class RepositoryRole(SphinxRole):
    """{repro-repository}`text`: a link to the repository, or a note that no public address
    is recorded for this build."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        url = self.config.repro_repository
        if url:
            return [nodes.reference(self.rawtext, url, refuri=url)], []
        return [nodes.inline(text=WORDS["no_repository"](lang_of(self.env)))], []
