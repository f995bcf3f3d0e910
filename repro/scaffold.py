"""`python -m repro new NAME`: everything a new chapter needs, wired in.

It writes a chapter package whose experiment is small and works (synchronous_commit on
vs off under pgbench TPC-B), its page, the page's English catalogue, its test, and the
line in the table of contents; the sources table and the README's chapter list are
generated from the chapters' own files. The contributor replaces the example.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from . import claims
from .chapter import Chapter
from .errors import ReproError
from .readme import update_readme
from .registry import build, chapters
from .text import Text

ROOT = Path(__file__).resolve().parent.parent

FILES = {
    "__init__.py": '''"""Chapter: {name} (replace with what it reproduces, from which publication).

The registry builds the chapter from this package by convention: analysis.summarize,
findings.FINDINGS, page.TABLES, page.CHARTS, page.numbers; here only its title and short
name (and REQUIRES, what the whole chapter needs, if anything)."""
from ...text import Text

TITLE = Text("{name} (日本語の題)", "{name} (English title)")
SHORT = Text("{name}", "{name}")  # where a list names many chapters
''',
    "experiment.py": '''"""What runs on the server (replace): pgbench TPC-B with synchronous_commit on and off,
interleaved round by round."""
from __future__ import annotations

from typing import Any

from ...lab.context import RunContext

CONDITIONS = {{"on": {{"synchronous_commit": "on"}}, "off": {{"synchronous_commit": "off"}}}}


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step(f"pgbench -i -s {{p['scale']}}")
    server = ctx.server("TPC-B", ctx.settings("postgresql.conf"))
    server.pgbench_init(p["scale"])

    def tpcb(condition: str) -> Any:
        def one() -> dict[str, dict[str, float]]:
            r = server.pgbench(["-c", str(p["clients"]), "-T", str(p["seconds"])],
                               options=CONDITIONS[condition])
            return {{condition: {{"latency_ms": r.latency_avg_ms, "tps": r.tps}}}}
        return one

    ctx.rounds({{c: tpcb(c) for c in CONDITIONS}})
''',
    "analysis.py": '''"""From the rounds to what findings and page use."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median, paired_change


def gain(r: Rounds) -> float | None:
    """TPS with synchronous_commit = off against on, paired round by round (%)."""
    return paired_change(r.pairs("off", "on", "tps"))


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    return {{"tps": {{c: median(r.values(c, "tps")) for c in ("on", "off")}}}}
''',
    "findings.py": '''"""The findings: each a statistic of the rounds against a threshold (replace); their
words (claim, the original's number, where in the source) are in findings.toml."""
from __future__ import annotations

from ...text import Text
from ...verdict import Above, Check, Measure
from ...wording import Wording
from .analysis import gain

GAIN_PCT = 10.0  # from the original's number or a natural boundary, registered (repro register) before any run

WORDS = Wording.beside(__file__)

FINDINGS = [
    WORDS.finding("F1",
                  [Check(Measure(Text("TPS の変化 (off ÷ on)", "TPS change (off over on)"), gain, "%", 1,
                                 signed=True), Above(GAIN_PCT))]),
]
''',
    "findings.toml": '''# The words of each finding of this chapter, in both languages: its claim, the original's
# number and where in the source it stands (source: the id in original.toml). How each is
# judged is in findings.py (repro/wording.py reads this file).

[F1]
claim.ja = "synchronous_commit = off で TPS が 10 % を超えて上がる"
claim.en = "synchronous_commit = off raises TPS by more than 10 %"
original.ja = "(原典の値)"
original.en = "(the original's value)"
source = "{name}"
where.ja = "(原典の表や節)"
where.en = "(the table or section of the source)"
''',
    "sizes.toml": '''# The original's numbers for the same statistic as each check (repro/sizes.py), or why
# they do not compare; registered before the runs that judge them (repro register).

[F1]
original = ["+100 %"]
basis = "(replace: where the number is in the source) original.toml's tps, off 2000 / on 1000"
''',
    "page.py": '''"""What the page shows (replace)."""
from __future__ import annotations

from ...chapter import Chart, Run, Series, Table, scaling_table
from ...text import Number, Text
from .findings import FINDINGS

CONDITIONS = ("on", "off")


def tps_table(run: Run) -> Table:
    original = run.chapter.original["tps"]
    return Table(Text("TPS", "TPS"), [Text("条件", "Condition"), Text("原典", "Original"),
                                       Text("本ビルド", "This build")],
                 [[c, Number(original[c], "", 0), Number(run.summary["tps"][c], "", 0)]
                  for c in CONDITIONS])


def tps_chart(run: Run) -> Chart:
    original = run.chapter.original["tps"]
    return Chart(Text("TPS", "TPS"), [Text(c, c) for c in CONDITIONS],
                 [Series(Text("原典", "original"), [original[c] for c in CONDITIONS]),
                  Series(Text("本ビルド", "this build"), [run.summary["tps"][c] for c in CONDITIONS])],
                 Text("TPS", "TPS"))


def numbers(run: Run) -> dict[str, Number]:
    return {{"gain": run.estimate(FINDINGS[0].checks[0].measure)}}


SCALE_ROWS = [("scale", Text("pgbench のスケールファクター", "pgbench scale factor")),
              ("clients", Text("クライアント数", "clients")),
              ("seconds", Text("1 回の実行時間 [s]", "run length [s]")),
              ("rounds", Text("繰り返し (ラウンド、最小)", "repetitions (rounds, at least)"))]
TABLES = {{"tps": tps_table, "scaling": scaling_table(SCALE_ROWS)}}
CHARTS = {{"tps": tps_chart}}
''',
    "scales.toml": '''# scale: pgbench -i -s; clients: pgbench -c; seconds: one run; rounds: repetitions (at least);
# max_rounds, budget_s: more rounds for undecided findings within budget_s seconds of the run
[tiny]
scale = 1
clients = 2
seconds = 1
rounds = 3
max_rounds = 5
budget_s = 60

[default]
scale = 10
clients = 4
seconds = 3
rounds = 5
max_rounds = 8
budget_s = 120

[full]
scale = 100
clients = 16
seconds = 300
rounds = 3
max_rounds = 3
budget_s = 10000
''',
    "original.toml": '''# The original publication (replace): its citation and its numbers, typed from the source.
[[sources]]
id = "{name}"
title = "(題名)"
english = "(English title)"
short = {{ ja = "(引用での短い呼び名)", en = "(short name in citations)" }}
url = ""  # the publication's own public address, as found in public material
no_url = {{ ja = "(アドレスがない理由)", en = "(why there is no address)" }}  # when url is empty
date = ""
by = {{ ja = "(著者・組織)", en = "(author or organisation)" }}
subject = {{ ja = "(対象)", en = "(subject)" }}

[tps]
on = 1000.0
off = 2000.0

[scale]
scale = 100
clients = 16
seconds = 300
rounds = 1
''',
    "files/postgresql.conf": '''# the server's settings (the original's postgresql.conf changes)
shared_buffers = 256MB
''',
}

PAGE = '''({name})=
# {name} (日本語の題)

```{{repro-status}} {name}
```

```{{repro-findings}} {name}
```

```{{repro-glance}} {name}
```

({name}-summary)=
## 要約

(この章が再現する知見の要約)

({name}-mechanism)=
## 仕組み

(検証する仕組みの説明と、その出典)

({name}-original)=
## 原典の実験

(出典: 題名、著者・組織、日付。環境、設定、クエリ、原典の数値)

```{{literalinclude}} /../repro/chapters/{name}/files/postgresql.conf
:language: ini
```

({name}-reproduction)=
## 再現の方法

({name}-scaling)=
### 何を縮小したか

```{{repro-table}} {name} scaling
```

(何をどれだけ縮小したか。区間と判定の決め方は「{{doc}}`/judging`」にあります)

```{{repro-rounds}} {name}
```

({name}-run)=
### 実行のしかた

(`make repro-{name}` での実行方法、`full` スケールでの実行方法)

({name}-results)=
## 結果

```{{repro-table}} {name} tps
```

```{{repro-chart}} {name} tps
```

({name}-majors)=
## メジャーバージョンごとの結果

```{{repro-majors}} {name}
```

({name}-provenance)=
## 来歴

```{{repro-provenance}} {name}
```

```{{repro-download}} {name}
```

({name}-limitations)=
## 制約と注意

(この環境で再現できないこと、その理由)
'''

CATALOGUE = {  # the page's Japanese messages and their English, as Sphinx extracts them
    "{name} (日本語の題)": "{name} (English title)",
    "要約": "Summary",
    "(この章が再現する知見の要約)": "(a summary of the findings this chapter reproduces)",
    "仕組み": "Mechanism",
    "(検証する仕組みの説明と、その出典)": "(the mechanism, with its sources)",
    "原典の実験": "The original experiment",
    "(出典: 題名、著者・組織、日付。環境、設定、クエリ、原典の数値)":
        "(source: title, author or organisation, date; environment, settings, queries, the "
        "original's numbers)",
    "再現の方法": "How it is reproduced",
    "何を縮小したか": "What was scaled down",
    "(何をどれだけ縮小したか。区間と判定の決め方は「{{doc}}`/judging`」にあります)":
        "(what was scaled and by how much; how intervals and verdicts are made: {{doc}}`/judging`)",
    "実行のしかた": "How to run it",
    "(`make repro-{name}` での実行方法、`full` スケールでの実行方法)":
        "(how to run it with `make repro-{name}`, and at `full` scale)",
    "結果": "Results",
    "メジャーバージョンごとの結果": "Results per major",
    "来歴": "Provenance",
    "制約と注意": "Limitations",
    "(この環境で再現できないこと、その理由)": "(what cannot be reproduced here, and why)",
}

TEST = '''"""{name}: what is particular to this chapter (the contract's checks run for every chapter
in test_chapters.py)."""
from conftest import chapter_result


def test_both_conditions_measured_every_round() -> None:
    doc, _ = chapter_result("{name}")
    rounds = doc["raw"]["rounds"]
    assert set(rounds) == {{"on", "off"}}
    assert all(len(v) >= doc["scale_params"]["rounds"] for v in rounds.values())
'''


def _po(name: str) -> str:
    entries = "".join(f'msgid "{k.format(name=name)}"\nmsgstr "{v.format(name=name)}"\n\n'
                      for k, v in CATALOGUE.items())
    return ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: en\\n"\n\n'
            + entries)


def create(name: str, root: Path = ROOT) -> list[Path]:
    """Write a new chapter's package, page, catalogue and test; add it to the table of
    contents and to the README's chapter list."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ReproError(f"chapter names are lower-case identifiers (a-z, 0-9, _), not {name!r}")
    if name in chapters() or (root / "repro" / "chapters" / name).exists():
        raise ReproError(f"chapter {name!r} exists already")
    package = root / "repro" / "chapters" / name
    files = {package / rel: text.format(name=name) for rel, text in FILES.items()}
    files[root / "docs" / "chapters" / f"{name}.md"] = PAGE.format(name=name)
    files[root / "locale" / "en" / "LC_MESSAGES" / "chapters" / f"{name}.po"] = _po(name)
    files[root / "tests" / f"test_chapter_{name}.py"] = TEST.format(name=name)
    for path in files:
        if path.exists():
            raise ReproError(f"{path.relative_to(root)} exists already")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    index = root / "docs" / "index.md"
    toc = index.read_text(encoding="utf-8")
    last = list(re.finditer(r"^chapters/\w+\n", toc, flags=re.M))[-1]
    index.write_text(toc[:last.end()] + f"chapters/{name}\n" + toc[last.end():], encoding="utf-8")
    readme = update_readme(root, extra=[name])
    register = _register_example(load(root, name))
    return [*files, index, *([readme] if readme else []), register]


def load(root: Path, name: str) -> Chapter:
    """A chapter package under `root` (the project, or a copy of it), imported from its files
    as the registry would import it."""
    package = root / "repro" / "chapters" / name
    spec = importlib.util.spec_from_file_location(f"repro.chapters.{name}", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return build(module)


def _register_example(chapter: Chapter) -> Path:
    """The example's claims and size, registered as made, before any run: the tests hold a
    chapter to its register from its first commit; the contributor's own claims are a
    revision, registered before the runs that judge them."""
    claims.register(chapter, EXAMPLE_WHY.en, why_ja=EXAMPLE_WHY.ja)
    claims.register_sizes(chapter)
    return claims.path(chapter)


EXAMPLE_WHY = Text("ひな形の例を、作ったときに (実行の前に) 登録しました。例を置き換えたら、判定する実行の前に "
                   "`repro register` で自分の主張を登録します。",
                   "The scaffold's example, registered when it was made (before any run). Replace it, and register "
                   "your own claims with `repro register` before the runs that judge them.")
