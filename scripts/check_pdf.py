"""Check the report's PDFs as `make pdf` built them, one per language: every chapter is a
chapter of the table of contents, no Latin letter or apostrophe is set in the Japanese font,
every font is embedded, the pages are A4, tables are numbered per chapter and per appendix
(A.1) in reading order, and LaTeX's overfull lines stay under a bound.

Reads the PDFs with poppler's pdftotext, pdffonts and pdfinfo (Debian's poppler-utils), and the DVI
they are made of with upTeX's updvitype (TeX Live).
Usage: python scripts/check_pdf.py [BUILD_DIR]   (default _build/latex; BUILD_DIR/ja, BUILD_DIR/en)
"""
from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repro import registry  # noqa: E402  (the checkout this script belongs to)

LANGUAGES = ("ja", "en")
# Overfull lines (LaTeX's "Overfull \hbox") a language's PDF may have. Measured after the
# tables were fitted (repro/site/latex.py): ja 0, en 0; before: ja 16502, en 18580 (every
# cell of a table squeezed below its longest word logs one or two). What can still overflow
# is text no line break can split and no column width foresees (a long literal or address
# in new text): a few such lines pass, a table that no longer fits (dozens) does not. An
# overflowing line logs two (in the paragraph, and where a table's cell is boxed).
OVERFULL_BOUND = 10
# The first code point of the blocks the Japanese font may set (Enclosed Alphanumerics,
# geometric shapes, dingbats, CJK): every character below it belongs to a Latin font.
CJK_FROM = 0x2460
SET_CHAR = re.compile(r"^\d+: (?:setchar|set[123] |put[123] )(\d+)")  # updvitype's lines
FONT = re.compile(r"current font is (\S+)")
ROMAN = re.compile(r"^[ivxlc]+$")


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def contents_text(pages: list[str]) -> str:
    """The table of contents: the pages numbered in roman numerals (Sphinx's manual class
    numbers the contents so, and every other page in arabic numerals or not at all), the
    number in the footer (English) or the header (Japanese)."""
    def numbered(page: str) -> bool:
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        return bool(lines) and any(ROMAN.match(line) for line in (lines[0], lines[-1]))
    return "\n".join(page for page in pages if numbered(page))


def squeezed(text: str) -> str:
    """Text without white space, ligatures unfolded (ﬁ -> fi): a title as the contents show
    it, whichever way its lines broke."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def missing_chapters(contents: str, titles: list[str]) -> list[str]:
    """The titles that are not a numbered chapter of the contents ("3 Title 41", "第3章Title41";
    a section would be "3.2 Title")."""
    flat = squeezed(contents)
    return [t for t in titles
            if not re.search(r"(?<![\d.])(?:第)?\d+(?:章)?" + re.escape(squeezed(t)) + r"\d", flat)]


def not_embedded(fonts_listing: str) -> list[str]:
    """From `pdffonts`: the fonts the PDF names without carrying them (a Japanese font left
    to the reader's machine)."""
    rows = [re.match(r"(\S+)\s+.+?\s(yes|no)\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+\s*$", line)
            for line in fonts_listing.splitlines()[2:]]
    return [m.group(1) for m in rows if m and m.group(2) == "no"]


def latin_in_japanese_font(dvi_listing: str) -> list[str]:
    """From `updvitype` of the DVI the PDF is made of: the characters below the CJK blocks
    (Latin letters, apostrophes, dashes, ×) set in a Japanese font. A Japanese font is one
    that sets a character code above 255 (no Latin font has more than 256). The PDF cannot
    tell: poppler reads no text for a quote set in the Japanese font."""
    font, placed = "", []
    for line in dvi_listing.splitlines():
        if m := SET_CHAR.match(line):
            placed.append((font, int(m.group(1))))
        elif m := FONT.search(line):
            font = m.group(1)
    japanese = {f for f, code in placed if code > 255}
    return sorted({f"{chr(code)!r} (U+{code:04X}) in {f}" for f, code in placed
                   if f in japanese and code < CJK_FROM})


# a caption ("Table 2.1: Findings", "表 2.1: 知見") or its repeat on a long table's next page
# ("Table 2.1 – continued from previous page"), not a sentence that names a source's table
CAPTION = re.compile(r"^\s*(?:Table|表)\s?([0-9]+|[A-Z])\.(\d+)(?::|\s+–)", re.M)
A4 = re.compile(r"^Page size:\s+595(?:\.\d+)? x 841(?:\.\d+)? pts", re.M)


def tables_out_of_order(text: str) -> list[str]:
    """Table captions whose chapter goes backwards in reading order ("Table 2.3" after
    "Table 5.1", or a chapter's number after an appendix's letter): each chapter numbers its
    own tables, and the appendices theirs by letter (A.1), so a reader never meets two
    tables "2.1"."""
    found, last = [], None
    for m in CAPTION.finditer(text):
        key = (1, m.group(1)) if m.group(1).isalpha() else (0, int(m.group(1)))
        if last is not None and key < last:
            found.append(m.group(0).strip())
        last = max(key, last) if last is not None else key
    return found


def not_a4(pdfinfo: str) -> bool:
    """From `pdfinfo`: whether the pages are other than A4 (595 x 842 pt)."""
    return not A4.search(pdfinfo)


def overfull(log: str) -> int:
    return sum(1 for line in log.splitlines() if line.startswith("Overfull \\hbox"))


def check(lang: str, build: Path) -> list[str]:
    """What is wrong with the PDF of `lang` (nothing: an empty list)."""
    pdf = build / lang / f"repro-report-{lang}.pdf"
    if not pdf.is_file():
        return [f"{pdf} is missing: make pdf builds it"]
    problems = []
    titles = [chapter.title(lang) for chapter in registry.chapters().values()]
    pages = run("pdftotext", "-layout", str(pdf), "-").split("\f")
    problems += [f"chapter not in the contents: {t}" for t in missing_chapters(contents_text(pages), titles)]
    problems += [f"font not embedded: {name}" for name in not_embedded(run("pdffonts", str(pdf)))]
    problems += ["the pages are not A4"] if not_a4(run("pdfinfo", str(pdf))) else []
    problems += [f"a table numbered out of its chapter's order: {c}" for c in tables_out_of_order("\n".join(pages))]
    dvi = run("updvitype", "-output-level=3", str(pdf.with_suffix(".dvi")))
    problems += [f"Latin in a Japanese font: {what}" for what in latin_in_japanese_font(dvi)]
    log = (build / lang / f"repro-report-{lang}.log").read_text(encoding="utf-8", errors="replace")
    if (count := overfull(log)) > OVERFULL_BOUND:
        problems.append(f"{count} overfull lines in the LaTeX log (bound {OVERFULL_BOUND})")
    return problems


def main(argv: list[str]) -> int:
    build = Path(argv[1]) if len(argv) > 1 else ROOT / "_build" / "latex"
    failed = False
    for lang in LANGUAGES:
        problems = check(lang, build)
        for problem in problems:
            print(f"check_pdf ({lang}): {problem}", file=sys.stderr)
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
