#!/usr/bin/env python3
"""Screenshots of the built site as a reader first sees it, to look at before calling a
change to the pages done (make screens): the front page, the version matrix and the
auto_explain, fulltext and partitions chapters, in both languages, at 1280x800 and 390x844 (the first screen; the
front page also whole), with Debian's headless Chromium; and the first pages of the PDFs,
where they were built (make pdf), with pdftoppm. Everything lands in _build/screens/.

Usage: scripts/screens.py [SITE_DIR]   (default: _build/html, as `make html` leaves it)
"""
from __future__ import annotations

import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "screens"
CHROMIUM = "/usr/bin/chromium"
PAGES = {"index": "index.html", "matrix": "matrix.html", "auto_explain": "chapters/auto_explain.html",
         "fulltext": "chapters/fulltext.html", "partitions": "chapters/partitions.html"}
WHOLE = {"index"}  # pages also taken whole, not only their first screen
SIZES = [(1280, 800), (390, 844)]
PDF_PAGES = 3


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def shoot(browser: Browser, base: str, lang: str, width: int, height: int) -> list[Path]:
    """Each page's first screen (and the whole of those in WHOLE) at one size."""
    page = browser.new_page(viewport={"width": width, "height": height})
    taken = []
    for name, path in PAGES.items():
        page.goto(f"{base}/{lang}/{path}", wait_until="load")
        taken.append(OUT / f"{name}-{lang}-{width}.png")
        page.screenshot(path=str(taken[-1]))
        if name in WHOLE:
            taken.append(OUT / f"{name}-{lang}-{width}-full.png")
            page.screenshot(path=str(taken[-1]), full_page=True)
    page.close()
    return taken


def pdf_pages(site: Path) -> list[Path]:
    """The first pages of each language's PDF as PNG (none where no PDF was built)."""
    taken = []
    for lang in ("ja", "en"):
        for pdf in sorted((site / lang).glob("*.pdf")):
            prefix = OUT / f"pdf-{pdf.stem}"
            subprocess.run(["pdftoppm", "-png", "-r", "70", "-f", "1", "-l", str(PDF_PAGES), str(pdf), str(prefix)],
                           check=True)
            taken += sorted(OUT.glob(f"{prefix.name}-*.png"))
    return taken


def main(site: Path) -> None:
    if not (site / "ja" / "index.html").exists():
        sys.exit(f"no site in {site}: make html first")
    OUT.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    taken: list[Path] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            for lang in ("ja", "en"):
                for width, height in SIZES:
                    taken += shoot(browser, base, lang, width, height)
            browser.close()
    finally:
        server.shutdown()
    taken += pdf_pages(site)
    print("\n".join(str(t.relative_to(ROOT)) for t in taken))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "_build" / "html")
