"""The built site in headless Chromium (Debian's), served over local HTTP.

By default the site is built here from the tiny-scale results of this test
session; SITE_DIR=_build/html checks the real build instead (make site-check).
Screenshots land in _build/screenshots/.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from repro import registry

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STATUS_WORDS = {"ja": ("再現した", "再現しなかった", "この環境では対象外"),
                "en": ("reproduced", "not reproduced", "not applicable here")}


@pytest.fixture(scope="module")
def site(tmp_path_factory, request) -> Path:
    if os.environ.get("SITE_DIR"):
        return Path(os.environ["SITE_DIR"]).resolve()
    request.getfixturevalue("tiny_results")  # the pages render this session's tiny runs
    return _build_site(tmp_path_factory.mktemp("site"))


def _build_site(out: Path) -> Path:
    env = {**os.environ, "SCALE": "tiny"}
    for lang in ("ja", "en"):
        subprocess.run([sys.executable, "-m", "sphinx", "-c", str(ROOT), "-W", "--keep-going", "-n",
                        "-q", "-b", "html", "-D", f"language={lang}", str(ROOT / "docs"),
                        str(out / lang)], check=True, env=env, cwd=ROOT)
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


def _open(browser, url: str) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="networkidle")
    return page, errors


def _broken_images(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")


@pytest.fixture(autouse=True)
def _order(base_url, browser) -> None:  # build and serve once before any browser test
    SHOTS.mkdir(parents=True, exist_ok=True)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_front_page_and_ledger(base_url, browser, lang: str) -> None:
    page, errors = _open(browser, f"{base_url}/{lang}/index.html")
    page.screenshot(path=str(SHOTS / f"index-{lang}.png"), full_page=True)
    assert errors == [] and _broken_images(page) == []
    ledger = page.inner_text("table")
    for name, chapter in registry.chapters().items():
        assert chapter.title(lang) in ledger
        for finding in chapter.findings:
            assert finding.id in ledger
    assert any(word in ledger for word in STATUS_WORDS[lang])
    page.close()


@pytest.mark.parametrize("name", sorted(registry.chapters()))
@pytest.mark.parametrize("lang, other", [("ja", "en"), ("en", "ja")])
def test_chapter_page_and_language_switch(base_url, browser, name: str, lang: str, other: str) -> None:
    chapter = registry.get(name)
    page, errors = _open(browser, f"{base_url}/{lang}/chapters/{name}.html")
    page.screenshot(path=str(SHOTS / f"{name}-{lang}.png"), full_page=True)
    assert errors == [] and _broken_images(page) == []
    assert page.locator(".repro-chart img").count() == len(chapter.charts)
    if "{uml}" in (ROOT / "docs" / "chapters" / f"{name}.md").read_text():
        assert page.locator("img[src$='.svg']").count() >= 1  # the PlantUML diagrams
    assert page.locator(".repro-findings li").count() == len(chapter.findings)
    page.click(".repro-language-link")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/{other}/chapters/{name}.html")
    assert page.locator("html").get_attribute("lang") == other
    page.close()


def test_root_page_leads_to_a_language(base_url, browser) -> None:
    page, errors = _open(browser, f"{base_url}/index.html")
    assert errors == []
    assert page.url.endswith("/en/index.html") or page.url.endswith("/ja/index.html")
    page.close()
