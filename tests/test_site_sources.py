"""Every number traced to its source: in the built site (both languages, in headless
Chromium), each link into the sources page lands on an entry with that id, that entry gives
the publication's public address or says why it has none, and a citation names the
publication rather than showing a bare number. Screenshots of the sources page and of one
chapter's findings table land in _build/screens/.
"""
from __future__ import annotations

import re

import pytest

from repro.site.sources import anchor, sources
from test_site import SCREENS, _goto, base_url, browser, site  # noqa: F401 (fixtures)

LANGS = ("ja", "en")
SHOWN_CHAPTER = "auto_explain"  # its findings table cites two sources, one row both
ADDRESS = re.compile(r"https?://[^\s/]+\.[^\s]+")


def test_every_source_gives_an_address_or_says_why_not_in_both_languages() -> None:
    """Each publication (listed alike by every chapter that reproduces it) has a short name
    for citations and either its public address or, in both languages, why it has none; a
    site to look for it on, if given, is an address too."""
    found = sources()
    assert found, "no source in any original.toml"
    for ident, source in found.items():
        entry = source.entry
        assert source.short.ja.strip() and source.short.en.strip(), ident
        if entry["url"]:
            assert ADDRESS.fullmatch(entry["url"]), f"{ident}: {entry['url']!r} is not an http(s) address"
        else:
            assert entry["no_url"]["ja"].strip() and entry["no_url"]["en"].strip(), ident
        if "site" in entry:
            assert ADDRESS.fullmatch(entry["site"]["url"]), f"{ident}: {entry['site']['url']!r}"


def _citations(page) -> list[dict[str, str]]:
    """Every link on the page into the sources page: its address and its text."""
    return page.eval_on_selector_all(
        "a[href*='sources.html#']", "links => links.map(a => ({href: a.href, text: a.innerText.trim()}))")


def _entry(page, ident: str) -> dict[str, object] | None:
    """What the sources page's element with this id offers a reader: its external links and
    its sentences saying why there is no address."""
    return page.evaluate("""id => {
        const e = document.getElementById(id);
        if (!e) return null;
        return {external: [...e.querySelectorAll("a[href^='http://'], a[href^='https://']")]
                              .filter(a => !a.href.startsWith(location.origin)).map(a => a.href),
                why_not: [...e.querySelectorAll('.repro-no-address')].map(p => p.innerText.trim())};
    }""", ident)


@pytest.mark.parametrize("lang", LANGS)
def test_every_citation_lands_on_an_entry_with_an_address_or_why_not(site, base_url, browser, lang: str) -> None:
    """Each chapter page's citations (the findings table's "original" column and the text's)
    link to sources.html#source-NNN, name the publication (never a bare "004"), and the
    entry they land on has an http(s) address or a sentence saying why there is none."""
    page = browser.new_page()
    cited: dict[str, str] = {}
    problems = []
    for html in sorted((site / lang / "chapters").glob("*.html")):
        _goto(page, f"{base_url}/{lang}/chapters/{html.name}")
        links = _citations(page)
        if not links:
            problems.append(f"{html.name}: no citation links to the sources page")
        for link in links:
            target = link["href"].split("#", 1)[1]
            cited.setdefault(target, f"{html.name}: {link['text']!r}")
            if re.fullmatch(r"\W*\d{3}\W*", link["text"]):
                problems.append(f"{html.name}: a bare number as a citation: {link['text']!r}")
    _goto(page, f"{base_url}/{lang}/sources.html")
    for target, where in sorted(cited.items()):
        entry = _entry(page, target)
        if entry is None:
            problems.append(f"{where} links to #{target}, which no element of sources.html has")
        elif not entry["external"] and not any(entry["why_not"]):
            problems.append(f"#{target}: neither a public address nor a sentence saying why not")
    page.close()
    assert not problems, "\n".join(problems)
    assert set(cited) == {anchor(i) for i in sources()}, "every source is cited from some chapter page"


@pytest.mark.parametrize("lang", LANGS)
def test_every_source_has_an_entry_and_the_screens_show_them(site, base_url, browser, lang: str) -> None:
    """The sources page has one entry per publication under the same ASCII anchor in both
    languages, each with a public address or why not; the page and a findings table are
    kept as screenshots to look at."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _goto(page, f"{base_url}/{lang}/sources.html")
    ids = page.eval_on_selector_all(".repro-source-entry", "es => es.map(e => e.id)")
    assert ids == [anchor(i) for i in sources()]
    for ident in ids:
        entry = _entry(page, ident)
        assert entry["external"] or any(entry["why_not"]), ident
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"sources-{lang}-1280.png"), full_page=True)
    _goto(page, f"{base_url}/{lang}/chapters/{SHOWN_CHAPTER}.html")
    table = page.locator("table.repro-table").filter(has=page.locator("a[href*='sources.html#']")).first
    table.scroll_into_view_if_needed()
    table.screenshot(path=str(SCREENS / f"findings-{SHOWN_CHAPTER}-{lang}-1280.png"))
    page.close()
