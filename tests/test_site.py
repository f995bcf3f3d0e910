"""The built site in headless Chromium (Debian's), served over local HTTP.

By default the site is built here from the chapter results of this test session
(fresh stored ones, or tiny runs); SITE_DIR=_build/html checks the real build instead
(make site-check).
Screenshots land in _build/screenshots/.
"""
from __future__ import annotations

import fcntl
import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Error as PlaywrightError, Page, sync_playwright

from conftest import SIZE_PAIR, chapter_result, site_scale, unrecomputable_ratios

from repro import registry, sizes, verdict_words
from repro.chapter import Run
from repro.majors import DEFAULT_MAJOR
from repro.site import expectations
from repro.site import matrix as matrix_site, store
from repro.site.answer import GROUPS, NOT_HERE
from repro.site.report import BUCKETS, KIND_SHORT, ORDER, OTHER_MAJORS, SPLIT, bucket
from repro.site.roles import run_numbers
from repro.site.words import WORDS
from repro.verdict import CHANGED, CONTRADICTED, INCONCLUSIVE, REPRODUCED

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
SCREENS = ROOT / "_build" / "screens"  # the entry pages at both widths, kept as CI artifacts
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory, request) -> Path:
    """The built site: one build per test session, shared by the modules that check it (and
    by pytest-xdist's workers, under a lock: the first one builds, the others wait for it)."""
    if os.environ.get("SITE_DIR"):
        return Path(os.environ["SITE_DIR"]).resolve()
    return _shared_site(tmp_path_factory, site_scale())


def _shared_site(tmp_path_factory, scale: str) -> Path:
    """One site for every module of the session that browses it (test_site_front.py too),
    and for every xdist worker: the first builds it under a lock, the others wait for it."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # the workers' common directory
    out = root / f"site-{scale}"
    with open(root / f"site-{scale}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "index.html").exists():  # copied last: the build is whole
            _build_site(out, scale)
    return out


def _build_site(out: Path, scale: str) -> Path:
    """Both languages at once (one per core): the longest wait of a fresh `make test`
    after the chapters' runs."""
    env = {**os.environ, "SCALE": scale}
    builds = {lang: subprocess.Popen([sys.executable, "-m", "sphinx", "-c", str(ROOT), "-W",
                                      "--keep-going", "-n", "-q", "-b", "html", "-D",
                                      f"language={lang}", str(ROOT / "docs"), str(out / lang)],
                                     env=env, cwd=ROOT)
              for lang in ("ja", "en")}
    failed = [lang for lang, build in builds.items() if build.wait() != 0]
    assert not failed, f"sphinx build failed: {failed}"
    shutil.copy(ROOT / "docs" / "_root" / "index.html", out / "index.html")
    return out


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest's output readable
        pass


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def _goto(page: Page, url: str, errors: list[str] | None = None) -> None:
    """Load a page, again if Chromium dropped its requests because the host's network
    changed: Docker adds and removes interfaces while the images' tests run beside these
    tests, and Chromium then fails the requests still connecting with ERR_NETWORK_CHANGED. That
    is the host, not the site, so the load is repeated, after a pause that lets the burst
    of changes of one container's start pass (with the errors it logged cleared); any other
    failure counts. The load event is enough: the pages fetch nothing after it (no web fonts,
    no script that requests), and waiting for the network to idle cost half a second a page."""
    for attempt in range(4):
        if attempt:
            page.wait_for_timeout(2000 * attempt)
        dropped: list[str] = []
        def note(request) -> None:
            if request.failure == NETWORK_CHANGED:
                dropped.append(request.url)
        page.on("requestfailed", note)
        if errors is not None:
            errors.clear()
        try:
            page.goto(url, wait_until="load")
        except PlaywrightError as e:
            if NETWORK_CHANGED not in str(e):
                raise
            dropped.append(url)
        finally:
            page.remove_listener("requestfailed", note)
        if not dropped:
            return
    raise AssertionError(f"{url}: four loads in a row lost requests to host network changes")


def _open(browser, url: str) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    _goto(page, url, errors)
    return page, errors


def _broken_images(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")


@pytest.fixture(autouse=True)
def _order(base_url, browser) -> None:  # build and serve once before any browser test
    SHOTS.mkdir(parents=True, exist_ok=True)
    SCREENS.mkdir(parents=True, exist_ok=True)


def _page_verdicts(name: str) -> list:
    """The verdicts the pages show: pooled over the runs of the current experiment (this
    build's and the stored ones). A site built elsewhere (SITE_DIR, perhaps `make html
    REPRO=cached`) shows this build's result or else the newest stored one, and the build
    directory may hold none or an unrelated tiny one; a site built here shows the fresh one."""
    scale = site_scale()
    shown = store.current(name, 17, scale)
    return shown.verdicts if shown.run is not None else Run(registry.get(name), chapter_result(name)[0]).verdicts


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_front_page_and_ledger(base_url, browser, lang: str) -> None:
    page, errors = _open(browser, f"{base_url}/{lang}/index.html")
    page.screenshot(path=str(SHOTS / f"index-{lang}.png"), full_page=True)
    assert errors == [] and _broken_images(page) == []
    groups = page.eval_on_selector_all(  # one collapsible group per chapter, closed at first
        "details.repro-ledger-chapter", "ds => ds.map(d => [d.dataset.chapter, d.open, "
        "d.querySelector('summary').innerText.trim(), Array.from(d.querySelectorAll('table.repro-ledger tbody tr'))"
        ".map(tr => Array.from(tr.cells).map(td => td.textContent.trim()))])")
    assert [name for name, *_ in groups] == list(registry.chapters())
    seen = set()
    for name, opened, line, rows in groups:  # rows: finding, claim, status
        assert not opened
        verdicts = {v.finding.id: v for v in _page_verdicts(name)}
        assert line.startswith(registry.get(name).title(lang)), line
        for status in {bucket(v) for v in verdicts.values()}:  # the line counts each verdict
            n = sum(bucket(v) == status for v in verdicts.values())
            assert f"{BUCKETS[status](lang)} {n}" in line, (line, status, n)
        for cells in rows:
            assert cells[2].startswith(verdict_words.badge_of(verdicts[cells[0]])(lang)), cells
            seen.add((name, cells[0]))
    assert seen == {(n, f.id) for n, c in registry.chapters().items() for f in c.findings}
    first = page.locator("details.repro-ledger-chapter").first  # opening a group shows its table
    assert not first.locator("table.repro-ledger").is_visible()
    first.locator("summary").click()
    assert first.locator("table.repro-ledger").is_visible()
    counted: dict[tuple[str, str], int] = {}  # the summary on this major counts the same verdicts
    for name, chapter in registry.chapters().items():
        for v in _page_verdicts(name):
            key = (KIND_SHORT[v.finding.kind](lang), bucket(v))
            counted[key] = counted.get(key, 0) + 1
    kinds, rows = _summary(page.locator("table.repro-summary").first)
    statuses = {BUCKETS[s](lang): s for s in ORDER}
    for kind, column in kinds.items():
        found = {statuses[status]: n for status, n in column.items() if status in statuses}
        assert {s: found.get(s, 0) for s in ORDER} == {s: counted.get((kind, s), 0) for s in ORDER}, kind
        assert column[rows[-1]] == sum(found.values())
    page.close()


def _summary(table) -> tuple[dict[str, dict[str, int]], list[str]]:
    """A table of counts (a row per verdict, a column per kind) as {kind: {verdict: n}}, and
    its rows' names (the last one: the total)."""
    heads = table.evaluate("t => Array.from(t.tHead.rows[0].cells).map(th => th.innerText.trim())")
    body = table.evaluate("t => Array.from(t.tBodies[0].rows).map(tr => Array.from(tr.cells).map(td => td.innerText.trim()))")
    names = [row[0].replace("\n", " ") for row in body]
    return {h.replace("\n", " "): {name: int(row[i]) for name, row in zip(names, body)}
            for i, h in enumerate(heads) if i}, names


def _charts_on_page(name: str) -> int:
    """The page's chart directives: each of the chapter's charts, and some again for another
    major (`:major:`), each its own image, or a "no result" stand-in where that major has none;
    and its findings across majors (repro-trend), each an image."""
    text = (ROOT / "docs" / "chapters" / f"{name}.md").read_text(encoding="utf-8")
    return text.count("```{repro-chart}") + text.count("```{repro-trend}")


@pytest.mark.parametrize("name", sorted(registry.chapters()))
@pytest.mark.parametrize("lang, other", [("ja", "en"), ("en", "ja")])
def test_chapter_page_and_language_switch(base_url, browser, name: str, lang: str, other: str) -> None:
    chapter = registry.get(name)
    page, errors = _open(browser, f"{base_url}/{lang}/chapters/{name}.html")
    page.screenshot(path=str(SHOTS / f"{name}-{lang}.png"), full_page=True)
    assert errors == [] and _broken_images(page) == []
    drawn, missing = page.locator(".repro-chart img").count(), page.locator(".repro-chart.repro-missing").count()
    assert drawn + missing == _charts_on_page(name) and drawn >= len(chapter.charts)  # this build's all drawn
    if "{uml}" in (ROOT / "docs" / "chapters" / f"{name}.md").read_text():
        assert page.locator("img[src$='.svg']").count() >= 1  # the PlantUML diagrams
    assert page.locator("table.repro-findings tbody tr").count() == len(chapter.findings)
    assert page.locator(".repro-differences").count() == 1  # what changed between majors, one line each
    page.click(".sidebar-drawer .repro-language-link")  # on wide screens, in the sidebar
    page.wait_for_url(f"**/{other}/chapters/{name}.html")  # loaded, or a timeout if the link went elsewhere
    assert page.locator("html").get_attribute("lang") == other
    page.close()


def test_root_page_leads_to_a_language(base_url, browser) -> None:
    page, errors = _open(browser, f"{base_url}/index.html")
    assert errors == []
    assert page.url.endswith("/en/index.html") or page.url.endswith("/ja/index.html")
    page.close()


def _visible_text(html: str, code: bool = True) -> str:
    """A page's text as read, without scripts and markup (and without code, if asked)."""
    html = re.sub(r"(?s)<(script|style|svg)\b.*?</\1>", " ", html)
    if not code:
        html = re.sub(r"(?s)<(pre|code)\b.*?</\1>", " ", html)
    return re.sub(r"(?s)<[^>]+>", " ", html)


JAPANESE = r"[\u3040-\u30ff\u3400-\u9fff]+"


def _cited() -> set[str]:
    """Japanese that English pages may show: the words of cited titles and names (shown in
    their own language), the language link, and what a chapter declares as Japanese data
    (the words it searches for)."""
    allowed = {"日本語"}
    for chapter in registry.chapters().values():
        for source in chapter.original["sources"]:
            for text in (source["title"], *source["by"].values()):
                allowed |= set(re.findall(JAPANESE, text))
        for text in chapter.original.get("japanese", {}).get("data", []):
            allowed |= set(re.findall(JAPANESE, text))
    return allowed


@pytest.mark.parametrize("name", sorted(registry.chapters()))
def test_inline_numbers_are_the_results(site: Path, name: str) -> None:
    """Every number a chapter page cites inline ({repro-num}), in both languages, is the one its
    result gives: the page shows the result's values, and the translation dropped none."""
    source = (ROOT / "docs" / "chapters" / f"{name}.md").read_text(encoding="utf-8")
    keys = re.findall(r"\{repro-num\}`" + name + r":([^`]+)`", source)
    shown = store.current(name, 17, site_scale())
    if shown.run is None or "unavailable" in shown.run.doc:
        pytest.skip(f"{name} has no result in this build")
    numbers = run_numbers(registry.get(name), shown.run)
    for lang in ("ja", "en"):
        page = (site / lang / "chapters" / f"{name}.html").read_text(encoding="utf-8")
        found = sorted(html.unescape(t) for t in re.findall(r'<span class="repro-num">([^<]*)</span>', page))
        assert found == sorted(numbers[k].format(lang) for k in keys), lang


OTHER_STATISTIC = ("この実行", "this run", "最新の実行", "newest run", "中央値", "median", "原典", "original",
                   "閾値", "しきい値", "threshold")
FINDING_ID = re.compile(r"\bF(\d+)\b")


def _sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences (Japanese ends them with 。, English with a full stop before a
    space; a number's decimal point has none)."""
    return [s for s in re.split(r"(?<=。)|(?<=\.)\s+(?=[A-Z(])", paragraph) if s.strip()]


@pytest.mark.parametrize("name", sorted(registry.chapters()))
def test_numbers_in_sentences_about_a_finding_are_its_verdicts(site: Path, name: str) -> None:
    """A sentence that names a finding (F3) and cites a measured number gives that finding's
    own number (its pooled estimate and interval, as the findings table shows it), the
    machine's CPU count, or says which other statistic it is (this run's, a median, the
    original's). Both languages, on the built page."""
    shown = store.current(name, 17, site_scale())
    if shown.run is None or "unavailable" in shown.run.doc:
        pytest.skip(f"{name} has no result in this build")
    verdicts = {v.finding.id: v for v in shown.verdicts}
    machine = run_numbers(registry.get(name), shown.run)["cpus"]
    problems = []
    for lang in ("ja", "en"):
        page = (site / lang / "chapters" / f"{name}.html").read_text(encoding="utf-8")
        for block in re.findall(r"(?s)<(?:p|li)\b[^>]*>(.*?)</(?:p|li)>", page):
            marked = re.sub(r'<span class="repro-num">([^<]*)</span>', lambda m: f"\x00{m[1]}\x01", block)
            for sentence in _sentences(html.unescape(re.sub(r"<[^>]+>", "", marked))):
                ids = [f"F{n}" for n in FINDING_ID.findall(sentence) if f"F{n}" in verdicts]
                cited = re.findall("\x00([^\x01]*)\x01", sentence)
                if not ids or not cited or any(w in sentence for w in OTHER_STATISTIC):
                    continue
                allowed = {c.number().format(lang) for f in ids for c in verdicts[f].checks}
                allowed.add(machine.format(lang))
                problems += [f"{lang}: {number!r} in {sentence.strip()[:160]!r} (allowed: {sorted(allowed)})"
                             for number in cited if number not in allowed]
    assert not problems, "\n".join(problems)


def test_english_pages_carry_no_japanese(site: Path) -> None:
    """Everything on the English site is translated, cited titles aside (a translation that
    Sphinx dropped, an untranslated label or a code comment would show up here)."""
    allowed = _cited()
    found = {}
    for page in sorted((site / "en").rglob("*.html")):
        if page.name in ("search.html", "genindex.html"):
            continue
        text = _visible_text(page.read_text(encoding="utf-8"))
        if hits := [run for run in re.findall(JAPANESE, text) if run not in allowed]:
            found[page.relative_to(site).as_posix()] = hits[:5]
    assert not found, found


MATRIX_TABLE = re.compile(r'<table[^>]*repro-matrix.*?</table>', re.S)
SUMMARY = re.compile(r'<details class="repro-cell">\s*<summary>(.*?)</summary>', re.S)
KEY_VALUE = re.compile(r'<span class="repro-key-value"[^>]*>([^<]*)</span>')
LEGEND_SYMBOL = re.compile(r'<span class="repro-legend-symbol">([^<]*)</span>')


def _tags_out(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_one_word_for_each_verdict_on_the_front_page_the_judging_page_and_the_matrix(site: Path, lang: str) -> None:
    """A verdict has one word (#70): the front page's tally and groups say it as the findings'
    badges do, the judging page defines it under that word, and the matrix's legend explains
    its symbol with it; the front page's words of before ("Does not hold", "Undecided") are gone."""
    index = _tags_out((site / lang / "index.html").read_text(encoding="utf-8"))
    judging = _tags_out((site / lang / "judging.html").read_text(encoding="utf-8"))
    matrix = (site / lang / "matrix.html").read_text(encoding="utf-8")
    legend = _tags_out(matrix[matrix.index("repro-legend"):][:20000])
    for status in (REPRODUCED, CONTRADICTED, CHANGED, INCONCLUSIVE):
        word = verdict_words.STATUS[status](lang)
        heading = word[:1].upper() + word[1:]
        assert heading in index and f"{heading}:" in judging and word in legend, (status, word)
    if lang == "en":
        assert "Does not hold" not in index and "Undecided" not in index


# The words for a verdict that the site used before it had one word each (#70): no page or PDF
# says them any more. ("成り立たない" stays a word of prose: a claim registered as not holding.)
RETIRED = {"en": ["Does not hold", "Undecided", "Can't run here", "Changed since"],
           "ja": ["まだ決まらない", "ここでは確かめられない", "その後のメジャーで変わった"]}
STATUS_SPAN = re.compile(r'<span class="[^"]*\brepro-status\b[^"]*"(?P<attrs>[^>]*)>(?P<text>.*?)</span>', re.S)
TITLE = re.compile(r'\btitle="([^"]*)"')


def _verdict_words(lang: str) -> list[str]:
    """What a badge, a tally or a symbol's name may start with: the verdicts' words (and as
    a heading), the front page's "not judged here", a verdict's variants (badge_of)."""
    words = [w(lang) for w in verdict_words.STATUS.values()]
    words += [w[:1].upper() + w[1:] for w in words]
    words += [dict(GROUPS)[NOT_HERE](lang)]
    return words + (["既存のサーバーでは対象外"] if lang == "ja" else ["not applicable against an existing server"])


BADGE_VARIANT = {"en": re.compile(r"^(changed in \d+|applies to )"),
                 "ja": re.compile(r"^(\S+ で変化|.+が対象( \d+)?$)")}  # a tally's count after it


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_every_page_and_the_pdf_say_only_the_defined_verdict_words(site: Path, lang: str) -> None:
    """Every badge, tally count and matrix symbol of every built page says one of the defined
    verdict words (verdict_words.STATUS, as badge_of varies it); no page and not the PDF
    says a retired one."""
    allowed, odd, retired = _verdict_words(lang), {}, {}
    for page in sorted((site / lang).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        for m in STATUS_SPAN.finditer(text):
            said = _tags_out(m["text"]).strip()
            if said in matrix_site.SYMBOL.values():  # a symbol: its accessible name says the word
                said = html.unescape(TITLE.search(m["attrs"]).group(1))
            if not (any(said.startswith(w) for w in allowed) or BADGE_VARIANT[lang].match(said)):
                odd.setdefault(page.name, set()).add(said)
        if hits := [w for w in RETIRED[lang] if w in _tags_out(text)]:
            retired[page.name] = hits
    pdf = site / lang / f"repro-report-{lang}.pdf"
    if pdf.is_file():  # make site builds it (CI); make html does not
        text = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
        if hits := [w for w in RETIRED[lang] if w in text]:
            retired[pdf.name] = hits
    assert not odd and not retired, (odd, retired)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_matrix_legend_explains_every_symbol_on_the_page(site: Path, lang: str) -> None:
    """Every symbol and mark in a matrix's cells (the matrix page, a chapter's table of majors)
    is in the legend on its page: the summary of a cell, its value's words and units aside,
    holds nothing else. A value carries no check number: its row's header names the check."""
    pages = [p for p in sorted((site / lang).rglob("*.html")) if "repro-matrix" in p.read_text(encoding="utf-8")]
    assert any(p.name == "matrix.html" for p in pages)
    unexplained: dict[str, set[str]] = {}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        legend = {html.unescape(s) for s in LEGEND_SYMBOL.findall(text)}
        shown: set[str] = set()
        for table in MATRIX_TABLE.findall(text):
            assert "repro-key-value" not in table or "repro-row-check" in table, page.name
            for summary in SUMMARY.findall(table):
                for value in KEY_VALUE.findall(summary):
                    assert not re.match(r"\d+: ", value), value  # no check number: the row's header names it
                    shown |= {"—"} if value.endswith("—") else set()
                shown |= set(_tags_out(KEY_VALUE.sub(" ", summary)).split())
        if missing := shown - legend:
            unexplained[page.relative_to(site).as_posix()] = missing
    assert not unexplained, unexplained


SIZE_COLUMN = re.compile(r'<p class="repro-size (?:same-size|smaller-now|larger-now|reversed-now)">(.*?)</p>', re.S)
SIZE_LIST = re.compile(r'<ul class="repro-size-list[^"]*">(.*?)</ul>', re.S)
SIZE_MARK_TITLE = re.compile(r'<span class="repro-size-mark"[^>]* title="([^"]*)"')


def _size_texts(page: str) -> list[str]:
    """A page's comparable sizes as a reader sees them: from the mark on (the front page's
    items name the finding and its claim first), or a matrix mark's title."""
    items = [item for block in SIZE_LIST.findall(page) for item in block.split("</li>")]
    marked = [_tags_out(x) for x in SIZE_COLUMN.findall(page) + items]
    return [t[min(t.index(m) for m in sizes.MARK.values() if m in t):] for t in marked
            if any(m in t for m in sizes.MARK.values())] + [html.unescape(t) for t in SIZE_MARK_TITLE.findall(page)]


def test_a_size_shows_ours_beside_the_original_and_no_ratio_a_reader_cannot_recompute(site: Path) -> None:
    """Each comparable size on the site (a findings table's size column, the front page's largest
    changes, a matrix cell's size mark) shows our value beside the original's, in one unit, and
    no ratio other than the quotient of the two (conftest.unrecomputable_ratios)."""
    found = [t for page in sorted(site.rglob("*.html")) for t in _size_texts(page.read_text(encoding="utf-8"))]
    assert len(found) > 20, "no sizes found on the site"
    problems = [t for t in found if not (pair := SIZE_PAIR.search(t)) or pair.group(2) != pair.group(4)
                or unrecomputable_ratios(t)]
    assert not problems, problems[:5]


def test_every_page_previews_with_title_and_description_in_its_language(site: Path) -> None:
    """Open Graph: a link to a chapter shows its title and first sentences, translated."""
    for lang in ("ja", "en"):
        for page in sorted((site / lang / "chapters").glob("*.html")):
            head = page.read_text(encoding="utf-8").split("</head>")[0]
            title = re.search(r'<meta property="og:title" content="([^"]+)"', head)
            description = re.search(r'<meta property="og:description" content="([^"]{40,})"', head)
            assert title and description, page
            assert bool(re.search(JAPANESE, html.unescape(description[1]))) == (lang == "ja"), page


THEME_ENGLISH = ("Skip to content", "Copyright", "Made with", "Previous", "Next", "Home",
                 "Contents", "Menu", "Expand", "Light mode", "Dark mode", "Back to top",
                 "On this page", "container", "Settings:")


def _diagrams(page: Path) -> list[tuple[str, str]]:
    """The PlantUML diagrams a page shows: each one's alt text and the words drawn in it."""
    markup = page.read_text(encoding="utf-8")
    found = []
    for tag in re.findall(r"<img\b[^>]*plantuml-[^>]*>", markup):
        src = re.search(r'src="([^"]+)"', tag)[1]
        alt = html.unescape((re.search(r'alt="([^"]*)"', tag) or [None, ""])[1])
        svg = (page.parent / src).read_text(encoding="utf-8")
        found.append((alt, " ".join(html.unescape(t) for t in re.findall(r"<text\b[^>]*>([^<]*)</text>", svg))))
    return found


def test_japanese_pages_carry_no_english_ui_text(site: Path) -> None:
    """The theme's words, on the page and in its diagrams: their alt texts (a Japanese
    sentence, not the diagram's source) and the words drawn in them (Japanese labels)."""
    found = {}
    for page in sorted((site / "ja").rglob("*.html")):
        html = re.sub(r'(?s)<p class="repro-english">.*?</p>', " ", page.read_text(encoding="utf-8"))  # repro-api
        diagrams = _diagrams(page)
        text = " ".join([_visible_text(html, code=False), *re.findall(r"<title>(.*?)</title>", html),
                         *(alt for alt, _ in diagrams), *(drawn for _, drawn in diagrams)])
        hits = [w for w in THEME_ENGLISH if re.search(rf"\b{re.escape(w)}\b", text)]
        hits += [f"diagram: {alt[:40]!r}" for alt, drawn in diagrams
                 if "@startuml" in alt or not alt.endswith("。") or not re.search(JAPANESE, drawn)]
        if hits:
            found[page.relative_to(site).as_posix()] = hits
    assert not found, found


def test_english_diagrams_are_drawn_and_described_in_english(site: Path) -> None:
    """An English page's diagrams: English labels, and an English sentence as alt text."""
    found = {}
    for page in sorted((site / "en" / "chapters").glob("*.html")):
        for alt, drawn in _diagrams(page):
            if "@startuml" in alt or not alt.endswith(".") or re.search(JAPANESE, alt + drawn):
                found.setdefault(page.name, []).append(alt[:60])
    assert not found, found
    assert any(_diagrams(p) for p in (site / "en" / "chapters").glob("*.html"))


def test_diagrams_are_drawings_not_error_messages(site: Path) -> None:
    svgs = sorted((site / "ja" / "_images").glob("plantuml-*.svg"))
    assert svgs
    for svg in svgs:
        text = svg.read_text(encoding="utf-8", errors="replace")
        assert "Cannot find Graphviz" not in text and "Syntax Error" not in text, svg.name
        assert len(re.findall(r"<(rect|path|polygon|line|ellipse)\b", text)) >= 3, svg.name


def test_charts_are_not_blank(site: Path) -> None:
    from PIL import Image
    pngs = sorted((site / "ja" / "_images" / "repro").glob("*.png"))
    shown = {m for page in (site / "ja" / "chapters").glob("*.html")
             for m in re.findall(r'src="\.\./_images/repro/([^"]+\.png)"', page.read_text(encoding="utf-8"))}
    assert {p.name for p in pngs} == shown and len(shown) >= sum(len(c.charts) for c in registry.chapters().values())
    for png in pngs:
        pixels = np.asarray(Image.open(png).convert("RGB").resize((200, 120))).reshape(-1, 3)
        ink = float((pixels.sum(axis=1, dtype=int) < 600).mean())
        assert len(np.unique(pixels, axis=0)) > 20 and ink > 0.02, png.name


SAYS_WHEN = {"ja": re.compile(r": \d{4}-\d{2}-\d{2} に、.{0,80}?(前|後)"),
             "en": re.compile(r": (predicted|declared) on \d{4}-\d{2}-\d{2}, [^)]*\b(before|after)\b")}
REVISION_LINK = re.compile(r'<a [^>]*href="([^"#]*)#([a-z_0-9]+-f\d+-rev-\d+)"')


def test_every_not_expected_says_when_and_before_or_after_runs(site: Path) -> None:
    """Every "not expected to hold here" on every page, in both languages, says when that was
    decided and whether before any run or after runs, and links to the revision's row."""
    problems, seen = [], 0
    for lang in ("ja", "en"):
        label = WORDS["not_expected"](lang).strip("()")
        for page in sorted((site / lang).rglob("*.html")):
            if page.name in ("search.html", "genindex.html"):
                continue
            source = page.read_text(encoding="utf-8")
            text = " ".join(html.unescape(_visible_text(source)).split())
            said = [text[m.end():m.end() + 100] for m in re.finditer(re.escape(label), text)]
            seen += len(said)
            where = page.relative_to(site).as_posix()
            problems += [f"{where}: {label}{s!r}" for s in said if not SAYS_WHEN[lang].match(s)]
            links = REVISION_LINK.findall(source)
            if len(links) < len(said):
                problems.append(f"{where}: {len(said)} notes, {len(links)} links to a revision")
            for target, ident in links:
                linked = (page.parent / target).resolve() if target else page
                if f'id="{ident}"' not in linked.read_text(encoding="utf-8"):
                    problems.append(f"{where}: a link to {target}#{ident}, which has no such row")
    assert seen, "no finding not expected to hold here on any page"
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_matrix_marks_the_findings_not_expected_and_its_legend_says_how(site: Path, lang: str) -> None:
    """A cell of a finding not expected to hold here carries † (predicted before any run) or ‡
    (declared after runs), naming when on hover; the page's legend explains both."""
    source = (site / lang / "matrix.html").read_text(encoding="utf-8")
    marks = re.findall(r'<span class="repro-expect-mark" role="img" aria-label="([^"]*)" title="[^"]*">([^<]*)</span>',
                       source)
    wanted = {expectations.mark(c, f)[0] for c in registry.chapters().values() for f in c.findings if not f.expected}
    assert wanted and {symbol for _, symbol in marks} == wanted
    label = WORDS["not_expected"](lang).strip("()")
    assert all(html.unescape(said).startswith(label) and re.search(r"\d{4}-\d{2}-\d{2}", said) for said, _ in marks)
    def plain(text: str) -> str:  # one space for any, straight quotes for curly ones
        return re.sub("[“”]", '"', " ".join(text.split())).replace("’", "'")
    legend = dict(matrix_site.LEGEND)
    shown = plain(html.unescape(_visible_text(source)))
    assert all(plain(legend[symbol](lang)) in shown for symbol in (expectations.PREDICTED, expectations.DECLARED_AFTER))


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_narrow_screens_scroll_tables_and_show_the_language_link(base_url, browser, lang: str) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 800})
    _goto(page, f"{base_url}/{lang}/chapters/wait_events.html")
    page.screenshot(path=str(SHOTS / f"wait_events-{lang}-390.png"), full_page=True)
    narrowest = page.eval_on_selector_all("table.repro-table td, table.repro-table th",
                                          "cells => Math.min(...cells.map(c => c.getBoundingClientRect().width))")
    assert narrowest >= 40, narrowest  # no cell squeezed to a character per line
    assert page.locator(".announcement .repro-language-link").is_visible()
    colors = page.eval_on_selector(".announcement .repro-language-link", """a => [
        getComputedStyle(a).color, getComputedStyle(a.closest('.announcement')).backgroundColor]""")
    assert _contrast(*colors) >= 4.5, colors  # WCAG AA for text
    page.close()


PAGES = ["index", "matrix", "sources"] + [f"chapters/{n}" for n in sorted(registry.chapters())]
WIDER_THAN_ITS_BOX = """tables => tables.filter(t => {
    const box = t.closest('.table-wrapper') || t.parentElement;
    if (t.classList.contains('repro-matrix') && window.innerWidth < 1280)  // narrower: they scroll
        return !(['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                 && getComputedStyle(t.rows[0].cells[0]).position === 'sticky');
    return t.getBoundingClientRect().width > box.clientWidth + 1;
}).map(t => `${t.className}: ${(t.querySelector('th') || t).innerText.slice(0, 40)}`)"""
MATRIX_CELLS = """tables => tables.map(t => {
    const rows = Array.from(t.tBodies[0].rows);  // the last row: each column's newest run
    return rows.slice(0, -1).map(tr => Array.from(tr.cells).slice(1).map(td => {
        const symbol = td.querySelector('.repro-symbol');
        return {symbol: symbol ? symbol.getAttribute('aria-label') : null,
                text: td.querySelector('summary') ? td.querySelector('summary').innerText : td.innerText};
    }));
})"""


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("width, scheme", [(1280, "light"), (390, "dark")])
def test_tables_fit_their_column_and_pages_never_scroll_sideways(
        base_url, browser, lang: str, width: int, scheme: str) -> None:
    """At 1280 px every table fits the content column (no column cut off), except a matrix of
    majors, which scrolls in its own box with the finding column kept in view. At 390 px a
    wide table scrolls inside its own box, never the page; the dark scheme keeps badges legible."""
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    problems: dict[str, object] = {}
    for name in PAGES:
        _goto(page, f"{base_url}/{lang}/{name}.html")
        if width >= 1280 and (wide := page.eval_on_selector_all("article table", WIDER_THAN_ITS_BOX)):
            problems[name] = wide
        if (scrolled := page.evaluate("document.documentElement.scrollWidth")) > width:
            problems[f"{name} (page)"] = f"{scrolled} px wide"
        badges = page.eval_on_selector_all(".repro-status", """bs => bs.slice(0, 20).map(b =>
            [getComputedStyle(b).color, getComputedStyle(b).backgroundColor])""")
        if low := [c for c in badges if _contrast(*c) < 4.5]:
            problems[f"{name} (badges)"] = low[:3]
    _goto(page, f"{base_url}/{lang}/chapters/parallel.html")
    page.screenshot(path=str(SHOTS / f"parallel-{lang}-{width}-{scheme}.png"), full_page=True)
    page.close()
    assert not problems, "\n".join(f"{k}: {v}" for k, v in problems.items())


def _contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two CSS rgb()/rgba() colours (alpha ignored)."""
    def luminance(css: str) -> float:
        channels = [float(v) / 255 for v in re.findall(r"[\d.]+", css)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_the_first_screen_answers_and_the_counts_agree(base_url, browser, lang: str, width: int, height: int) -> None:
    """The front page's first screen shows what holds, claim by claim (after the title and at
    most two sentences); "changed" means the same in the answer, the table of counts and the
    list under it; the counts' table fits the screen."""
    page = browser.new_page(viewport={"width": width, "height": height})
    _goto(page, f"{base_url}/{lang}/index.html")
    page.screenshot(path=str(SCREENS / f"index-{lang}-{width}.png"))
    first = page.locator(".repro-answer").first
    assert first.bounding_box()["y"] < height * 0.8, "the answer is not on the first screen"
    before = page.evaluate("""() => { const a = document.querySelector('.repro-answer');
        return Array.from(document.querySelectorAll('article p')).filter(p =>
            p.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING).map(p => p.innerText); }""")
    assert len(" ".join(before).replace("。", ". ").split(". ")) <= 3, before  # two sentences at most
    statuses = ("reproduced", "reproduced in part", "contradicted", "changed", "inconclusive", NOT_HERE)
    names = {s.replace(" ", "-"): s for s in statuses}
    groups = {names[next(c for c in box.get_attribute("class").split() if c in names)]: box.locator("li").count()
              for box in page.locator(".repro-answer").all()}
    kinds, _ = _summary(page.locator("table.repro-summary").first)
    originals = kinds[KIND_SHORT["original"](lang)]
    for status in statuses[:-2]:
        if status != "contradicted":
            assert groups.get(status, 0) == originals.get(BUCKETS[status](lang), 0), (status, groups, originals)
    # the counts' "contradicted" row holds what the answer tells apart: refutations, and claims
    # registered as not holding here (the rows under it), which it lists with what cannot run here
    not_expected = sum(originals.get(BUCKETS[split](lang), 0) for split in SPLIT)
    assert groups.get("contradicted", 0) == originals.get(BUCKETS["contradicted"](lang), 0) - not_expected
    assert groups.get(NOT_HERE, 0) == not_expected + sum(originals.get(BUCKETS[s](lang), 0)
                                                         for s in ("not applicable", OTHER_MAJORS))
    changed_total = sum(column.get(BUCKETS["changed"](lang), 0) for column in kinds.values())
    listed = page.locator("ul.repro-changed-list").first.locator("li").all_inner_texts()
    assert len([x for x in listed if x.strip() not in ("(ありません)", "(none)")]) == changed_total
    if width < 1280:  # the counts' tables and their captions fit a phone's width
        assert page.eval_on_selector_all("table.repro-summary", WIDER_THAN_ITS_BOX) == []
    page.close()


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_sizes_on_the_front_page_and_the_matrix_are_those_of_repro_matrix_json(base_url, browser, lang: str) -> None:
    """The front page's count of claims the same size as the original's (of those that
    compare, on the default major) and the matrix's size marks are `repro matrix --json`'s."""
    def matrix(scale: str) -> list[dict]:
        return json.loads(subprocess.run([sys.executable, "-m", "repro", "matrix", "--json", "--scale", scale],
                                         cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    scale = site_scale()
    rows = matrix(scale)
    here = [r for r in rows if r["major"] == DEFAULT_MAJOR and r["kind"] == "original"]
    if scale != "default":  # a build at another scale: the other majors' cells show the published runs
        rows = [r for r in matrix("default") if r["major"] != DEFAULT_MAJOR] + \
            [r for r in rows if r["major"] == DEFAULT_MAJOR]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _goto(page, f"{base_url}/{lang}/index.html")
    shown = {k: int(page.inner_text(f".repro-size-{k}")) for k in ("same", "n", "apart", "waiting")}
    assert shown == {"same": sum(r["size"] == sizes.SAME for r in here),
                     "n": sum(r["size"] in sizes.MARK for r in here),
                     "apart": sum(r["size"] == sizes.NOT_COMPARABLE for r in here),
                     "waiting": sum(r["size"] == sizes.NO_RUN for r in here)}, here
    _goto(page, f"{base_url}/{lang}/matrix.html")
    marks = page.eval_on_selector_all(".repro-size-mark", "ms => ms.map(m => m.textContent.trim())")
    assert {o: marks.count(m) for o, m in sizes.MARK.items()} == \
        {o: sum(r["size"] == o for r in rows) for o in sizes.MARK}
    page.close()


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_matrix_reads_at_a_glance(base_url, browser, lang: str) -> None:
    """At 1280 px all ten majors fit without sideways scrolling; every verdict is a symbol with
    an accessible name."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _goto(page, f"{base_url}/{lang}/matrix.html")
    page.screenshot(path=str(SCREENS / f"matrix-{lang}-1280.png"))
    boxes = page.eval_on_selector_all("div.table-wrapper.repro-matrix", "ws => ws.map(w => w.scrollWidth - w.clientWidth)")
    assert boxes and max(boxes) <= 1, f"a matrix scrolls sideways at 1280 px: {boxes}"
    problems = []
    for table in page.eval_on_selector_all("table.repro-matrix", MATRIX_CELLS):
        for row in table:
            for cell in row:
                if cell["symbol"] is None:
                    continue  # no result, or the chapter could not run there (its reason)
                if not cell["symbol"].strip():
                    problems.append(f"a symbol without a name: {cell}")
    narrow = browser.new_page(viewport={"width": 390, "height": 844}, color_scheme="dark")
    _goto(narrow, f"{base_url}/{lang}/matrix.html")
    narrow.screenshot(path=str(SCREENS / f"matrix-{lang}-390.png"))
    narrow.close()
    page.close()
    assert not problems, "\n".join(problems[:10])


def test_no_page_has_an_id_twice(site: Path) -> None:
    found = {}
    for page in sorted(site.rglob("*.html")):
        ids = re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8"))
        if twice := sorted({i for i in ids if ids.count(i) > 1}):
            found[page.relative_to(site).as_posix()] = twice[:5]
    assert not found, found


SEARCHES = {"ja": ["pg_wait_sampling", "log_timing", "synchronous_commit", "同期スタンバイ"],
            "en": ["pg_wait_sampling", "log_timing", "synchronous_commit", "standby"]}


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_search_finds_setting_names_and_words(base_url, browser, lang: str) -> None:
    page = browser.new_page()
    for word in SEARCHES[lang]:
        _goto(page, f"{base_url}/{lang}/search.html?q={word}")
        page.wait_for_selector("#search-results p.search-summary", timeout=15000)
        summary = page.inner_text("#search-results p.search-summary")
        found = page.locator("#search-results ul.search li").count()
        assert found > 0 and re.search(r"\d", summary), (word, summary)
    page.close()


def test_no_password_anywhere_on_the_site(site: Path) -> None:
    """Pages, downloadable results and search index carry no connection password (a result's
    conninfo is redacted to password=***)."""
    secret = re.compile(r"password=(?!\*\*\*)\S|POSTGRES_PASSWORD=\S|PGPASSWORD=\S", re.IGNORECASE)
    found = [p.relative_to(site).as_posix() for p in sorted(site.rglob("*"))
             if p.is_file() and p.suffix in (".html", ".json", ".js", ".txt")
             and secret.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, found


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_page_says_where_this_builds_run_and_the_stored_runs_differ(site: Path, lang: str) -> None:
    """Under each findings table, a note names every finding whose check `repro compare` finds
    apart between this build's run and the stored runs (the interval of their ratio or
    difference excludes none), with both machines; no note where none differs, and none for
    a page that shows a stored run."""
    from repro import compare
    from repro.errors import ReproError
    for name in registry.chapters():
        shown = store.current(name, DEFAULT_MAJOR, site_scale())
        text = (site / lang / "chapters" / f"{name}.html").read_text(encoding="utf-8")
        note = re.search(r'<p class="repro-table-note repro-apart">(.*?)</p>', text, re.S)
        if not shown.this_build or shown.run is None or "unavailable" in shown.run.doc:
            assert note is None, name
            continue
        try:
            apart = {f["finding"] for f in compare.compare(registry.get(name), DEFAULT_MAJOR)["findings"] if f["differ"]}
        except ReproError:  # no stored run of this experiment beside it
            apart = set()
        assert (note is not None) == bool(apart), (name, apart)
        if note:
            said = _tags_out(note.group(1))
            assert all(re.search(rf"\b{fid}\b", said) for fid in apart), (name, apart, said)
