"""Japanese search that finds setting names and Japanese words.

Sphinx's Japanese index splits text with TinySegmenter, so `pg_wait_sampling` becomes
"pg", "_wait", ... while the browser keeps a query such as `pg_wait_sampling` or
同期スタンバイ as one term: neither is found. Here both sides split the same way:
runs of ASCII letters, digits and underscores stay whole (setting and function names),
and runs of Japanese become overlapping two-character grams, as pg_bigm indexes them.
A query matches pages that hold all of its terms. The search page's plural messages come
from this project's catalogue as well (`search_messages`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from babel.messages.pofile import read_po
from sphinx.application import Sphinx
from sphinx.search.ja import SearchJapanese

WORD = re.compile(r"[^\W]+", re.UNICODE)
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]+")


def split(text: str) -> list[str]:
    terms: list[str] = []
    for word in WORD.findall(text):
        pos = 0
        for m in JAPANESE.finditer(word):
            if m.start() > pos:
                terms.append(word[pos:m.start()])
            run = m.group()
            terms += [run[i:i + 2] for i in range(len(run) - 1)] or [run]
            pos = m.end()
        if word[pos:]:
            terms.append(word[pos:])
    return terms


class SearchJapaneseBigrams(SearchJapanese):
    lang = "ja"
    js_splitter_code = r"""
function splitQuery(query) {
  const japanese = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]+/gu;
  const terms = [];
  for (const word of query.split(/[^\p{Letter}\p{Number}_]+/gu).filter((w) => w)) {
    let pos = 0;
    for (const m of word.matchAll(japanese)) {
      if (m.index > pos) terms.push(word.slice(pos, m.index));
      const run = m[0];
      if (run.length === 1) terms.push(run);
      for (let i = 0; i + 2 <= run.length; i++) terms.push(run.slice(i, i + 2));
      pos = m.index + run.length;
    }
    if (pos < word.length) terms.push(word.slice(pos));
  }
  return terms;
}
"""

    def split(self, input: str) -> list[str]:
        return split(input)

    def word_filter(self, stemmed_word: str) -> bool:
        return len(stemmed_word) > 1 or bool(JAPANESE.fullmatch(stemmed_word))


def search_messages(app: Sphinx) -> None:
    """The search page's plural messages from this project's catalogue (locale/LANG/sphinx.po)
    into the browser, after Sphinx's translations.js, which can carry them empty."""
    catalogs = [Path(app.srcdir, d, (app.config.language or "ja"), "LC_MESSAGES", "sphinx.po") for d in app.config.locale_dirs]
    plurals: dict[str, list[str]] = {}
    for catalog in filter(Path.exists, catalogs if app.builder.format == "html" else []):
        with catalog.open("rb") as f:
            plurals |= {m.id[0]: list(m.string) for m in read_po(f) if m.pluralizable and all(m.string)}
    if plurals:
        app.add_js_file(None, priority=600, body="".join(
            f"Documentation.TRANSLATIONS[{json.dumps(k)}] = {json.dumps(v)};" for k, v in plurals.items()))
