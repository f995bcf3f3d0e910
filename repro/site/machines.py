"""Contributed runs, by machine (repro-machines): the runs that `repro archive --machine
NAME` keeps in results/CHAPTER/NAME/, each machine's pooled apart from the project's and
from the other machines' (repro/pooling.py pools one kind of machine), a row per machine and
major with its verdicts counted."""
from __future__ import annotations

from collections import Counter
from typing import Any

from docutils import nodes

from .. import majors, pooling, registry, results
from ..chapter import Table
from ..text import Number, Text
from ..verdict import STATUSES
from ..verdict_words import STATUS
from .nodes import Directive, para, table_node
from .words import WORDS

NONE_YET = Text("寄せられた実行はまだありません。自分のマシンで章を実行し、`make archive MACHINE=名前` で "
                "`results/` に加えてプルリクエストを送ると、ここにマシンごとに並びます。",
                "No contributed run yet. Run a chapter on your machine, keep it with `make archive "
                "MACHINE=name` and send it as a pull request: it shows here, machine by machine.")
HEADER = [Text("章", "Chapter"), Text("マシン", "Machine"), Text("メジャー", "Major"), Text("実行", "Runs"),
          Text("判定 (プールしたもの)", "Verdicts (pooled)")]


def machine_rows(names: list[str], scale: str) -> list[dict[str, Any]]:
    """Per chapter, machine and major with a contributed run: its runs, and its pooled
    verdicts counted by status."""
    rows = []
    for name in names:
        chapter = registry.get(name)
        for machine, found in results.machines(name).items():
            for major in sorted({doc["major"] for _, doc in found if doc["scale"] == scale}):
                pool = pooling.gather(chapter, major, scale, found=found)
                rows.append({"chapter": name, "machine": machine, "major": major, "runs": len(pool.runs),
                             "verdicts": Counter(v.status for v in pool.verdicts)})
    return rows


class MachinesDirective(Directive):
    """The contributed runs of one chapter (an argument) or of all, by machine."""

    optional_arguments = 1

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        names = [self.arguments[0]] if self.arguments else list(registry.chapters())
        for name in names:
            self.depend_on(name)
            for path, _ in (f for found in results.machines(name).values() for f in found):
                self.env.note_dependency(str(path))
        rows = machine_rows(names, self.scale)
        if not rows:
            return [para(NONE_YET(lang))]
        cells: list[list[Any]] = [
            [registry.get(r["chapter"]).title(lang), r["machine"], majors.name(r["major"]), Number(r["runs"], "", 0),
             ("、" if lang == "ja" else ", ").join(f"{STATUS[s](lang)} {r['verdicts'][s]}"
                                                    for s in STATUSES if r["verdicts"][s])]
            for r in rows]
        table = Table(Text("寄せられた実行 (マシンごと)", "Contributed runs, by machine"), HEADER, cells,
                      WORDS["pooled_note"])
        return table_node(table, lang)
