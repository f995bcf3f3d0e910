"""A chapter's findings in words: `findings.toml`, beside `findings.py`, holds each finding's
claim, the original's number and where in the source it stands, in both languages; the
Python file holds only how each is judged. Prose is kept apart from code so that a
translator or a reviewer of citations reads one file, and the declarations of the checks
stay short. An entry:

    [F1]
    claim.ja = "..."
    claim.en = "..."
    original.ja = "..."   # the original's number (with `source` and `where`), if it gave one
    original.en = "..."
    source = "004"        # the source's id in the chapter's original.toml
    where.ja = "..."      # the table, figure or section, as the source numbers it
    where.en = "..."
    also = [{ source = "000", where = { ja = "...", en = "..." } }]  # other places, if any
    not_here.ja = "..."   # a finding not expected to hold here: why, in a few words
    not_here.en = "..."

A `{NAME}` in a text is filled from the values given to `Wording.beside` (a client count
that the checks use too, for example)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from .errors import ReproError
from .text import Text
from .verdict import Cite, Finding

KEYS = {"claim", "original", "source", "where", "also", "not_here"}


class Wording:
    """The entries of one `findings.toml` (tests/test_chapters.py checks that each chapter's
    entries and findings match one to one)."""

    def __init__(self, path: Path, values: dict[str, object]):
        self.path = path
        with path.open("rb") as f:
            self.entries: dict[str, dict[str, Any]] = tomllib.load(f)
        self.values = {k: str(v) for k, v in values.items()}
        for fid, entry in self.entries.items():
            if unknown := set(entry) - KEYS:
                raise ReproError(f"{path}: [{fid}] has unknown keys {', '.join(sorted(unknown))}")

    @classmethod
    def beside(cls, module_file: str, **values: object) -> Wording:
        """The `findings.toml` next to a chapter's `findings.py` (pass its `__file__`)."""
        return cls(Path(module_file).with_name("findings.toml"), values)

    def _fill(self, text: str) -> str:
        def value(m: re.Match[str]) -> str:
            if m[1] not in self.values:
                raise ReproError(f"{self.path}: {{{m[1]}}} has no value (Wording.beside(__file__, {m[1]}=...))")
            return self.values[m[1]]
        return re.sub(r"\{(\w+)\}", value, text)

    def _text(self, pair: dict[str, str]) -> Text:
        return Text(self._fill(pair["ja"]), self._fill(pair["en"]))

    def finding(self, fid: str, checks: list[Any], **rest: Any) -> Finding:
        """The finding `fid` with its words from the file and its checks and the rest from
        the code."""
        try:
            entry = self.entries[fid]
        except KeyError:
            raise ReproError(f"{self.path}: no entry [{fid}] for the finding {fid}") from None
        original = self._text(entry["original"]) if "original" in entry else None
        cite = Cite(entry["source"], self._text(entry["where"])) if "source" in entry else None
        also = [Cite(a["source"], self._text(a["where"])) for a in entry.get("also", [])]
        not_here = self._text(entry["not_here"]) if "not_here" in entry else None
        return Finding(fid, self._text(entry["claim"]), checks, original=original, cite=cite, also=also,
                       not_here=not_here, **rest)
