"""The front page answers on its first screen (issue 56): at 1280x800 and 390x844, in both
languages, the tally of the originals' claims on the default major and what does not hold
lie inside the first viewport; every link to a finding lands on that finding's row. The
site, the server and the browser are test_site.py's (Debian's headless Chromium)."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from test_site import _goto, _page_verdicts, base_url, browser, site  # noqa: F401 (fixtures)

from repro import registry
from repro.site.answer import HOLDS_UNEXPECTED, NOT_HERE, TALLY, group_id, group_of
from repro.verdict import CONTRADICTED, ORIGINAL, PARTIAL, REPRODUCED

SIZES = [(1280, 800), (390, 844)]
STATUS_CLASSES = {s.replace(" ", "-"): s for s in TALLY}
TALLY_COUNTS = """p => Array.from(p.querySelectorAll('.repro-tally-count')).map(c =>
    [Array.from(c.classList).find(k => k !== 'repro-status' && k !== 'repro-tally-count'),
     Number(c.textContent.match(/\\d+/)[0])])"""
FINDING_ANCHOR = re.compile(r"^([a-z0-9_]+)-f\d+$")


def _expected_tally() -> dict[str, int]:
    """The originals' claims on the default major per group of the answer, from the verdicts
    the pages show."""
    counts = dict.fromkeys(TALLY, 0)
    for name in registry.chapters():
        for v in _page_verdicts(name):
            if v.finding.kind == ORIGINAL:
                counts[group_of(v)] += 1
    return counts


def _inside(box: dict[str, float] | None, width: int, height: int) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width + 1 \
        and box["y"] + box["height"] <= height + 1


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("width, height", SIZES)
def test_the_tally_and_what_does_not_hold_are_on_the_first_screen(
        base_url, browser, lang: str, width: int, height: int) -> None:
    """The tally counts the verdicts the pages show, group by group, and lies in the first
    viewport; so does its link to what does not hold, which leads to that group, and the
    first of its items (at 1280 px all of them). Each item names its chapter by the short
    name, links to the finding's row and says why it does not hold."""
    page = browser.new_page(viewport={"width": width, "height": height})
    _goto(page, f"{base_url}/{lang}/index.html")
    tally = page.locator("p.repro-tally")
    assert _inside(tally.bounding_box(), width, height), tally.bounding_box()
    shown = {STATUS_CLASSES[k]: n for k, n in tally.evaluate(TALLY_COUNTS)}
    expected = _expected_tally()
    assert shown == {s: n for s, n in expected.items() if n or s != PARTIAL}, (shown, expected)
    for status, n in expected.items():
        assert page.locator(f"#{group_id(status)} li").count() == n, status
    failing = page.locator(f"#{group_id(CONTRADICTED)} > ul > li")
    if expected[CONTRADICTED]:
        link = tally.locator(f"a[href='#{group_id(CONTRADICTED)}']")
        assert _inside(link.bounding_box(), width, height)
        boxes = [item.bounding_box() for item in failing.all()]
        assert _inside(boxes[0], width, height), boxes[0]
        if width >= 1280:
            assert all(_inside(b, width, height) for b in boxes), boxes
    shorts = {c.short(lang) for c in registry.chapters().values()}
    for item in failing.all():
        name = item.locator("a").first
        text, href = name.inner_text().strip(), name.get_attribute("href")
        assert text.rsplit(" ", 1)[0] in shorts and re.fullmatch(r"F\d+", text.rsplit(" ", 1)[1]), text
        chapter = text.rsplit(" ", 1)[0]
        ident = next(n for n, c in registry.chapters().items() if c.short(lang) == chapter)
        assert href.endswith(f"chapters/{ident}.html#{ident}-{text.rsplit(' ', 1)[1].lower()}"), href
        assert item.locator("strong").first.inner_text().strip(), f"{text}: no reason why"
    page.close()


def _finding_links(page) -> list[str]:
    """The absolute addresses of the page's links to a finding's row."""
    hrefs = page.eval_on_selector_all("article a[href*='#']", "as => as.map(a => a.href)")
    return sorted({h for h in hrefs if FINDING_ANCHOR.match(urlsplit(h).fragment)})


def test_every_finding_link_on_the_front_page_lands_on_its_row(base_url, browser) -> None:
    """The answer, the summary and the ledger link findings to their rows: in both languages
    the same ASCII anchors, each an id of the finding's row on the chapter page (a row of its
    findings table whose first cell is that finding)."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    links = {}
    for lang in ("ja", "en"):
        _goto(page, f"{base_url}/{lang}/index.html")
        links[lang] = _finding_links(page)
    strip = {lang: sorted({h.replace(f"/{lang}/", "/") for h in hrefs}) for lang, hrefs in links.items()}
    assert links["en"] and strip["ja"] == strip["en"]
    expected = {f"{n}-{f.id.lower()}" for n, c in registry.chapters().items() for f in c.findings}
    assert {urlsplit(h).fragment for h in links["en"]} <= expected
    problems = []
    for lang, hrefs in links.items():
        by_page: dict[str, list[str]] = {}
        for h in hrefs:
            by_page.setdefault(h.split("#")[0], []).append(urlsplit(h).fragment)
        for url, anchors in sorted(by_page.items()):
            _goto(page, url)
            for anchor in anchors:
                found = page.evaluate("""a => { const e = document.getElementById(a);
                    return e && [e.tagName, e.cells[0].innerText.trim().split(/\\s+/)[0]]; }""", anchor)
                if found != ["TR", anchor.split("-")[-1].upper()]:
                    problems.append(f"{lang}: {url}#{anchor} -> {found}")
    page.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_every_finding_row_has_its_anchor(base_url, browser, lang: str) -> None:
    """Each chapter's findings table gives each row the finding's anchor, in the findings'
    order, and so does the front page's ledger."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    ledger = []
    for name, chapter in registry.chapters().items():
        ids = [f"{name}-{v.finding.id.lower()}" for v in _page_verdicts(name)]
        _goto(page, f"{base_url}/{lang}/chapters/{name}.html")
        assert page.eval_on_selector_all("table.repro-findings tbody tr", "rs => rs.map(r => r.id)") == ids, name
        ledger += ids
    _goto(page, f"{base_url}/{lang}/index.html")
    assert page.eval_on_selector_all("table.repro-ledger tbody tr", "rs => rs.map(r => r.id)") == ledger
    page.close()


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_front_page_does_not_repeat_chapter_titles_as_link_text(base_url, browser, lang: str) -> None:
    """Lists of findings name chapters by their short names: a full title is a link's text
    only in the table of contents."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    _goto(page, f"{base_url}/{lang}/index.html")
    texts = page.eval_on_selector_all("article a", """as => as.filter(a => !a.closest('.toctree-wrapper'))
        .map(a => a.innerText.trim())""")
    titles = [c.title(lang) for c in registry.chapters().values()]
    assert not [t for t in texts if any(title in t for title in titles)]
    page.close()


def test_every_finding_not_expected_to_hold_says_why() -> None:
    """The front page says why a claim does not hold here: a finding not expected to hold
    declares why in a few words (findings.toml's not_here); one expected to hold has none."""
    for name, chapter in registry.chapters().items():
        for f in chapter.findings:
            if f.expected:
                assert f.not_here is None, f"{name} {f.id}"
            else:
                assert f.not_here and f.not_here.ja and f.not_here.en and len(f.not_here.en) < 100, f"{name} {f.id}"


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_refutations_and_limits_never_share_a_group(base_url, browser, lang: str) -> None:  # noqa: F811
    """"Does not hold" lists only claims expected to hold here; a claim this machine cannot
    check or registered as not holding here is under "not judged here", leading with why and
    on how many runs; every one registered as not holding here says when (its note); one that
    holds though not expected says so in words."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    _goto(page, f"{base_url}/{lang}/index.html")
    chapters = registry.chapters()
    verdicts = {f"{chapters[name].short(lang)} {v.finding.id}": v for name in chapters
                for v in _page_verdicts(name) if v.finding.kind == ORIGINAL}
    for status in (CONTRADICTED, NOT_HERE, REPRODUCED):
        for item in page.locator(f"#{group_id(status)} > ul > li").all():
            v = verdicts[item.locator("a").first.inner_text().strip()]
            assert group_of(v) == status
            if status == CONTRADICTED:
                assert v.finding.expected
            if status == NOT_HERE:
                assert item.locator("strong").first.inner_text().strip()
                assert re.search(r"\d+ (回の実行|runs)", item.inner_text())
            assert (not v.finding.expected) == (item.locator(".repro-expectation").count() == 1)
            if status == REPRODUCED and not v.finding.expected:
                assert HOLDS_UNEXPECTED(lang) in item.inner_text()
    page.close()
