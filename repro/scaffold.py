"""`python -m repro new NAME`: the files of a new chapter, wired into the table of contents.

The module it writes is a small working experiment (synchronous_commit on vs
off under pgbench TPC-B), so `make repro-NAME` runs from the first minute and
shows every piece a chapter has; the contributor replaces it with the real one.
"""
from __future__ import annotations

import re
from pathlib import Path

from .errors import ReproError
from .registry import chapters

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''"""Chapter: {name} (replace with: what it reproduces, from which publication)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..chapter import Chapter, Chart, Finding, Outcome, RunContext, Series, Table
from ..measure import median, paired_change, run_rounds
from ..text import Number, Text

# The original publication's numbers, typed by hand, shown with its citation.
ORIGINAL = {{"on": 1000.0, "off": 2000.0}}  # TODO: the original's table

SCALES = {{
    "tiny": {{"scale": 1, "clients": 2, "seconds": 1, "rounds": 3}},
    "default": {{"scale": 10, "clients": 4, "seconds": 3, "rounds": 5}},
    "full": {{"scale": 100, "clients": 16, "seconds": 300, "rounds": 3}},
}}
CONDITIONS = {{"on": {{"synchronous_commit": "on"}}, "off": {{"synchronous_commit": "off"}}}}


def run(ctx: RunContext) -> dict[str, Any]:
    p = ctx.params
    ctx.progress.step(f"pgbench -i -s {{p['scale']}}")
    server = ctx.server("TPC-B", {{}})
    server.pgbench_init(p["scale"])

    def tpcb(condition: str) -> Any:
        def one() -> dict[str, dict[str, float]]:
            r = server.pgbench(["-c", str(p["clients"]), "-T", str(p["seconds"])],
                               options=CONDITIONS[condition])
            return {{condition: {{"latency_ms": r.latency_avg_ms, "tps": r.tps}}}}
        return one

    measured = run_rounds(p["rounds"], {{c: tpcb(c) for c in CONDITIONS}}, ctx.progress)
    tps = {{c: [m["tps"] for m in ms] for c, ms in measured.items()}}
    summary = {{"tps": {{c: median(v) for c, v in tps.items()}},
               "gain_pct": paired_change(tps["off"], tps["on"])}}
    return {{"raw": {{"pgbench": measured}}, "summary": summary}}


def steps(p: dict[str, Any]) -> int:
    return 1 + p["rounds"] * len(CONDITIONS)


GAIN_PCT = 10.0  # TODO: set from repeated default runs


def f1(s: dict[str, Any]) -> Outcome:
    gain = s["gain_pct"]
    return Outcome(gain > GAIN_PCT, [(Text("TPS の増分", "TPS gain"), Number(gain, "%", 1, signed=True))],
                   Text(f"> +{{GAIN_PCT:g}} %", f"> +{{GAIN_PCT:g}} %"))


def table(s: dict[str, Any]) -> Table:
    return Table(Text("TPS", "TPS"), [Text("条件", "Condition"), Text("原典", "Original"),
                                       Text("本ビルド", "This build")],
                 [[c, Number(ORIGINAL[c], "", 0), Number(s["tps"][c], "", 0)] for c in CONDITIONS])


def chart(s: dict[str, Any]) -> Chart:
    return Chart(Text("TPS", "TPS"), [Text(c, c) for c in CONDITIONS],
                 [Series(Text("原典", "original"), [ORIGINAL[c] for c in CONDITIONS]),
                  Series(Text("本ビルド", "this build"), [s["tps"][c] for c in CONDITIONS])],
                 Text("tps", "tps"))


CHAPTER = Chapter(
    name="{name}",
    title=Text("{name} (日本語の題)", "{name} (English title)"),
    source=Path(__file__),
    scales=SCALES,
    run=run,
    findings=[Finding("F1", Text("synchronous_commit = off で TPS が上がる",
                                 "synchronous_commit = off raises TPS"), f1)],
    steps=steps,
    tables={{"tps": table}},
    charts={{"tps": chart}},
    supports_dsn=True,  # one server, no restarts: it can run against an existing server
)
'''

PAGE = '''# {name} (日本語の題)

```{{repro-status}} {name}
```

## 要約

```{{repro-findings}} {name}
```

## 仕組み

(検証する仕組みの説明と、その出典)

## 原典の実験

(出典: 題名、著者・組織、日付。環境、設定、クエリ、原典の数値)

## 再現の方法

(何をどれだけ縮小したか、`make repro-{name}` での実行方法、full スケールでの実行方法)

## 結果

```{{repro-table}} {name} tps
```

```{{repro-chart}} {name} tps
```

## 来歴

```{{repro-provenance}} {name}
```

```{{repro-download}} {name}
```

## 制約と注意

(この環境で再現できないこと、その理由)
'''

TEST = '''"""{name} at tiny scale: every expected finding must hold; the page's pieces build."""
from chapter_checks import check_pieces_build, failed_expected_findings


def test_expected_findings_hold(tiny_results) -> None:
    doc, _ = tiny_results["{name}"]
    failed = failed_expected_findings(doc)
    assert not failed, failed


def test_pages_pieces_build_from_the_result(tiny_results) -> None:
    doc, _ = tiny_results["{name}"]
    check_pieces_build("{name}", doc)
'''


def create(name: str, root: Path = ROOT) -> list[Path]:
    """Write the module, page and test of a new chapter; add it to the table of contents."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ReproError(f"chapter names are lower-case identifiers (a-z, 0-9, _), not {name!r}")
    if name in chapters():
        raise ReproError(f"chapter {name!r} exists already")
    files = {
        root / "repro" / "chapters" / f"{name}.py": MODULE.format(name=name),
        root / "docs" / "chapters" / f"{name}.md": PAGE.format(name=name),
        root / "tests" / f"test_chapter_{name}.py": TEST.format(name=name),
    }
    for path in files:
        if path.exists():
            raise ReproError(f"{path.relative_to(root)} exists already")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    index = root / "docs" / "index.md"
    toc = index.read_text(encoding="utf-8")
    last = list(re.finditer(r"^chapters/\w+\n", toc, flags=re.M))[-1]
    index.write_text(toc[:last.end()] + f"chapters/{name}\n" + toc[last.end():], encoding="utf-8")
    return [*files, index]
