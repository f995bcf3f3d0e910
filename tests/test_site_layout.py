"""A chapter page's layout in headless Chromium, both languages: badges keep their words
whole, a phone sees every finding's verdict without scrolling sideways, every chapter links
to how verdicts are judged, and sections carry the same ASCII ids in both languages.

Reuses test_site's built site (its fixtures: SITE_DIR=_build/html checks the real build)."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from conftest import site_scale
from test_site import SHOTS, _goto, base_url, browser, site  # noqa: F401 (fixtures)

from repro import registry
from repro.site import store
from repro.verdict import NOT_APPLICABLE
from repro.verdict_words import badge_of
from repro.site.glance import JUDGING
from repro.site.words import WORDS

CHAPTERS = sorted(registry.chapters())
LANGS = ["ja", "en"]

WORDS_SPLIT_ACROSS_LINES = """badges => badges.flatMap(b => {
    const out = [];
    const walker = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        for (const m of t.data.matchAll(/\\S+/g)) {  // a word: what lies between spaces
            const range = document.createRange();
            range.setStart(t, m.index);
            range.setEnd(t, m.index + m[0].length);
            const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
            if (lines.size > 1) out.push(`${m[0]} (in "${b.textContent.trim()}")`);
        }
    }
    return out;
})"""

VERDICTS_OFF_SCREEN = """([tables, verdict]) => tables.flatMap(t => {
    const column = Array.from(t.tHead.rows[0].cells).findIndex(th => th.textContent.trim() === verdict);
    if (column < 0) return [`${t.caption ? t.caption.textContent : 'a table'}: no column "${verdict}"`];
    return Array.from(t.tBodies[0].rows).flatMap(tr => {
        const box = tr.cells[column].getBoundingClientRect();
        const badge = tr.cells[column].querySelector('.repro-status');
        const inside = r => r.width > 0 && r.left >= 0 && r.right <= window.innerWidth;
        return inside(box) && badge && inside(badge.getBoundingClientRect()) ? []
            : [`${tr.cells[0].textContent.trim().slice(0, 30)}: ${Math.round(box.left)}-${Math.round(box.right)} px`];
    });
})"""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("width", [1280, 390])
def test_no_badge_wraps_inside_a_word(base_url, browser, lang: str, width: int) -> None:  # noqa: F811
    """A verdict badge may wrap between its words (a long "not applicable" reason), never
    inside one ("reprod/uced"): each word's text lies on one line, on every chapter page,
    the front page and the matrix."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems = {}
    for name in ["index", "matrix"] + [f"chapters/{c}" for c in CHAPTERS]:
        _goto(page, f"{base_url}/{lang}/{name}.html")
        badges = page.locator(".repro-status").count()
        if split := page.eval_on_selector_all(".repro-status", WORDS_SPLIT_ACROSS_LINES):
            problems[name] = split[:5]
        assert name == "index" or badges > 0, f"{name}: no badge at all"
    page.close()
    assert not problems, problems


@pytest.mark.parametrize("lang", LANGS)
def test_every_verdict_is_on_a_phone_screen(base_url, browser, lang: str) -> None:  # noqa: F811
    """At 390x844 each findings table shows every finding's verdict inside the viewport,
    without sideways scrolling (the table becomes a stack of cards)."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    problems = {}
    for name in CHAPTERS:
        _goto(page, f"{base_url}/{lang}/chapters/{name}.html")
        tables = page.locator("table.repro-findings").count()
        off = page.evaluate(f"() => ({VERDICTS_OFF_SCREEN})([Array.from(document.querySelectorAll("
                            f"'table.repro-findings')), {WORDS['status'](lang)!r}])")
        if off or tables != 1:
            problems[name] = off[:5] or f"{tables} findings tables"
        if (scrolled := page.evaluate("document.documentElement.scrollWidth")) > 390:
            problems[f"{name} (page)"] = f"{scrolled} px wide"
    _goto(page, f"{base_url}/{lang}/chapters/fulltext.html")
    page.screenshot(path=str(SHOTS / f"fulltext-{lang}-390-cards.png"))
    page.close()
    assert not problems, problems


WORDS_BROKEN_IN_CELLS = """tables => tables.flatMap(t => Array.from(t.querySelectorAll('td')).flatMap(td => {
    const out = [];
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (const m of n.data.matchAll(/[A-Za-z0-9_.]{2,}/g)) {  // a Latin word or identifier
            const range = document.createRange();
            range.setStart(n, m.index);
            range.setEnd(n, m.index + m[0].length);
            if (new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top))).size > 1) out.push(m[0]);
        }
    }
    return out;
}))"""


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("width", [1280, 390])
def test_findings_tables_break_lines_between_words_only(base_url, browser, lang: str, width: int) -> None:  # noqa: F811
    """No Latin word or identifier of a findings table is split across two lines
    ("RowExclusiveLoc/k", "asynchro/nous"), on a laptop or as a phone's cards."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    broken = {}
    for name in CHAPTERS:
        _goto(page, f"{base_url}/{lang}/chapters/{name}.html")
        if words := page.eval_on_selector_all("table.repro-findings", WORDS_BROKEN_IN_CELLS):
            broken[name] = words[:5]
    page.close()
    assert not broken, broken


SCREEN = 800  # a laptop's viewport at 1280 px


@pytest.mark.parametrize("lang", LANGS)
def test_every_summary_is_within_three_screens_and_the_tally_above_it_links_every_finding(
        base_url, browser, lang: str) -> None:  # noqa: F811
    """The answer comes first: on every chapter page at 1280x800, the Summary's heading starts
    within three screens of the top, under the one-line tally, whose links reach every row
    of the findings table (one link a finding)."""
    page = browser.new_page(viewport={"width": 1280, "height": SCREEN})
    problems = {}
    for name in CHAPTERS:
        _goto(page, f"{base_url}/{lang}/chapters/{name}.html")
        summary = f"{name}-summary".replace("_", "-")  # docutils' ids have no underscore
        top = page.evaluate(f"document.getElementById('{summary}').getBoundingClientRect().top + window.scrollY")
        tally = page.evaluate("""() => {
            const t = document.querySelector('.repro-chapter-tally');
            return t ? [t.getBoundingClientRect().top + window.scrollY,
                        Array.from(t.querySelectorAll('a')).map(a => a.getAttribute('href'))] : null;
        }""")
        rows = page.evaluate("Array.from(document.querySelectorAll('table.repro-findings tbody tr')).map(r => r.id)")
        if top > 3 * SCREEN:
            problems[name] = f"Summary at {top:.0f} px"
        elif tally is None or tally[0] > top:
            problems[name] = "no tally above the Summary"
        elif sorted(h.split("#")[-1] for h in tally[1]) != sorted(rows):
            problems[name] = f"the tally links {tally[1]}, the rows are {rows}"
    _goto(page, f"{base_url}/{lang}/chapters/fulltext.html")
    page.screenshot(path=str(SHOTS / f"fulltext-{lang}-1280-top.png"))
    page.close()
    assert not problems, problems


def _html(site: Path, lang: str, name: str) -> str:  # noqa: F811
    return (site / lang / "chapters" / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", LANGS)
def test_every_chapter_links_to_how_we_judge(site: Path, lang: str) -> None:  # noqa: F811
    """Each chapter page links to the one page on how verdicts are judged, from the note
    right under its findings table."""
    assert (site / lang / f"{JUDGING}.html").exists()
    for name in CHAPTERS:
        page = _html(site, lang, name)
        table_end = page.index("</table>", re.search(r'<table class="[^"]*\brepro-findings\b', page).start())
        note = re.match(r'(?s)\s*</div>\s*<p class="repro-table-note">(.*?)</p>', page[table_end + len("</table>"):])
        assert note and f'href="../{JUDGING}.html"' in note[1], name


def _section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


@pytest.mark.parametrize("name", CHAPTERS)
def test_sections_have_the_same_ascii_ids_in_both_languages(site: Path, name: str) -> None:  # noqa: F811
    """An English page's sections, and every other id on it, are ASCII, and each section has
    the id it has on the Japanese page: a link to #auto-explain-run works in both."""
    english, japanese = _html(site, "en", name), _html(site, "ja", name)
    ids = re.findall(r'\sid="([^"]+)"', english)
    assert [i for i in ids if not i.isascii()] == []
    sections = _section_ids(english)
    assert sections == _section_ids(japanese)
    assert all(s.startswith(name.replace("_", "-")) for s in sections), sections
    for section in ("run", "majors"):  # what the line under the findings table links to
        assert f"{name.replace('_', '-')}-{section}" in sections, section


def _changing(name: str) -> set[str]:
    """The findings whose verdict (badge) is not the same on every major with a result that it
    applies to, at the scale the pages show (test_site._page_verdicts)."""
    scale = site_scale()
    shown = [s for s in store.majors(name, scale).values() if s.verdicts]
    if len(shown) < 2:
        return set()
    verdicts = [{v.finding.id: v for v in s.verdicts} for s in shown]
    badges = {f.id: {badge_of(vs[f.id]) for vs in verdicts if vs[f.id].status != NOT_APPLICABLE}
              for f in registry.get(name).findings}
    return {fid for fid, found in badges.items() if len(found) > 1}


@pytest.mark.parametrize("lang", LANGS)
def test_the_line_under_the_findings_names_what_changes_across_majors(site: Path, lang: str) -> None:  # noqa: F811
    """Under the findings table, the first line names exactly the findings whose verdict
    differs between majors (from the results, as the matrix shows them), and the command."""
    for name in CHAPTERS:
        page = _html(site, lang, name)
        majors = re.search(r'(?s)<p class="repro-glance-majors">(.*?)</p>', page)
        run = re.search(r'(?s)<p class="repro-glance-run">(.*?)</p>', page)
        assert majors and run, name
        text = html.unescape(re.sub(r"<[^>]+>", "", majors[1]))
        assert set(re.findall(r"\bF\d+\b", text)) == _changing(name), (name, text)
        assert f"make repro-{name}" in html.unescape(re.sub(r"<[^>]+>", "", run[1]))


SCALE_IN_PROSE = re.compile(r"\b(?:default|tiny|full) ?スケール")


@pytest.mark.parametrize("page", ["chapters/" + c for c in CHAPTERS] + ["judging", "contributing"])
def test_japanese_prose_writes_a_scale_as_its_name_in_code(page: str) -> None:
    """"default スケール" reads as an English word left on a Japanese page: a scale's name
    is written as the code it is (`default` スケール, SCALE=default), or in Japanese."""
    source = (Path(__file__).resolve().parent.parent / "docs" / f"{page}.md").read_text(encoding="utf-8")
    prose = re.sub(r"`[^`\n]*`", " ", re.sub(r"(?ms)^(```|:::).*?^\1\s*$", " ", source))
    assert SCALE_IN_PROSE.findall(prose) == []

