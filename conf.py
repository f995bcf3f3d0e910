"""Sphinx configuration: Japanese sources in docs/, English through locale/ (sphinx-intl).

Build with `make html`; it runs `sphinx-build -c . docs _build/html/<lang>` per language.
"""
import os
import sys
from pathlib import Path

from sphinx.util.texescape import escape

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

project = "PostgreSQL 性能検証レポート (再現可能版)"
author = "repro contributors"
copyright = "2026, repro contributors"  # per language in _titles
language = "ja"

extensions = [
    "myst_parser",
    "sphinx_copybutton",
    "sphinxcontrib.plantuml",
    "repro.site.sphinxext",
]
myst_enable_extensions = ["colon_fence", "deflist"]
# no anchors made from headings: they would be Japanese on the English pages too; a section
# that is linked to carries an explicit ASCII label, (auto_explain-run)=, the same in both languages
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_templates", "_root", "_static"]

locale_dirs = ["../locale/"]  # relative to the source directory (docs/)
gettext_compact = False  # one catalogue per page, e.g. locale/en/LC_MESSAGES/chapters/auto_explain.po
gettext_uuid = False
gettext_location = False

nitpicky = True
numfig = True
numfig_secnum_depth = 1  # "Table 3.2": numbered per chapter (the toctree numbers chapters)

html_theme = "furo"
templates_path = ["docs/_templates"]  # relative to this file (the configuration directory)
html_static_path = ["docs/_static"]
html_css_files = ["repro.css"]
html_favicon = "docs/_static/favicon.svg"
html_theme_options = {"announcement": "language"}  # the block itself: _templates/page.html
html_sidebars = {"**": ["sidebar/brand.html", "sidebar/language.html", "sidebar/search.html",
                        "sidebar/scroll-start.html", "sidebar/navigation.html",
                        "sidebar/scroll-end.html"]}
html_context = {"repro_stored": os.environ.get("REPRO") == "cached"}  # `make html REPRO=cached`
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False

plantuml = "plantuml"
plantuml_output_format = "svg_img"

copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True


TITLES = {  # (project, short title for the sidebar, copyright) per language
    "ja": ("PostgreSQL 性能検証レポート (再現可能版)", "PostgreSQL 性能検証レポート",
           "2026 repro の貢献者。原典の著作権はそれぞれの著者にあります"),
    "en": ("PostgreSQL performance verification report (reproducible)",
           "PostgreSQL verification report",
           "2026 repro contributors; the source publications belong to their authors"),
}
html_show_sphinx = False  # the footer names the theme only (its Sphinx credit is not translatable)


# The PDF of the whole report, per language (make pdf): Japanese through upLaTeX.
latex_engine = "uplatex"  # per language in _titles
latex_show_urls = "footnote"
CONTENTS = {"ja": "目次", "en": "Contents"}  # the PDF's table of contents (not the first toctree's caption)
# upLaTeX sets every character outside ASCII in the Japanese font unless told otherwise: an
# apostrophe, a dash, ×, a no-break space came out full-width. pxcjkcat's mode for mostly
# Latin text keeps only the CJK blocks (and ◐, which only the Japanese font has) in the
# Japanese font; inputenc sets the rest in the Latin fonts, and the few that these lack
# come from math and the dingbats font (✓ ✗). pxchfon embeds the Japanese font (TeX Live's
# map may leave it out of the PDF): Noto CJK (Debian's fonts-noto-cjk, only its Regular
# and Bold), which also has the simplified Chinese of cited titles that the Adobe-Japan1
# fonts lack. pdflscape turns the page of a table too wide for it. A finding's kind and
# claim start lines of their own, as on the site (repro.css: display: block). Sphinx numbers
# a table, figure or code block after the chapter's number even in the appendices ("Table 2.1" in
# appendix B): there it takes the appendix's letter.
LATEX_PREAMBLE = r"""
\usepackage[noto-otc]{pxchfon}
\setlightminchofont{:0:NotoSerifCJK-Regular.ttc}
\setmediumgothicfont{:0:NotoSansCJK-Regular.ttc}
\setxboldgothicfont{:0:NotoSansCJK-Bold.ttc}
\setoneweightgothicfont{:0:NotoSansCJK-Regular.ttc}
\setmarugothicfont{:0:NotoSansCJK-Regular.ttc}
\usepackage[prefernoncjk]{pxcjkcat}
\cjkcategory{sym18}{cjk}
\usepackage[utf8]{inputenc}
\usepackage{pdflscape}
\usepackage{pifont}
\DeclareUnicodeCharacter{2713}{\ding{51}}
\DeclareUnicodeCharacter{2717}{\ding{55}}
\DeclareUnicodeCharacter{2212}{\textminus}
\DeclareUnicodeCharacter{2264}{\ensuremath{\leq}}
\DeclareUnicodeCharacter{2265}{\ensuremath{\geq}}
\DeclareUnicodeCharacter{21C4}{\ensuremath{\rightleftarrows}}
\DeclareUnicodeCharacter{21C5}{\ensuremath{\uparrow\!\downarrow}}
\expandafter\def\csname DUrolerepro-kind\endcsname#1{\par#1}
\expandafter\def\csname DUrolerepro-claim\endcsname#1{\par#1}
\makeatletter
\g@addto@macro\appendix{\def\thetable{\thechapter.\arabic{table}}\def\thefigure{\thechapter.\arabic{figure}}%
  \def\theliteralblock{\thechapter.\arabic{literalblock}}}
\makeatother
"""


def _unbroken(title: str) -> str:
    """The title as LaTeX that breaks only between its words: Japanese may otherwise break
    between any two characters ("再現可 / 能版")."""
    return " ".join(rf"\mbox{{{escape(word)}}}" for word in title.split())


def _titles(app, config):
    config.project, config.html_title, config.copyright = TITLES[config.language]
    app.tags.add(config.language)  # ```{only} ja``` / ```{only} en```: a diagram drawn per language
    if os.environ.get("REPRO_BASEURL"):  # the site's public address: canonical links, og:url, sitemap
        config.html_baseurl = os.environ["REPRO_BASEURL"].rstrip("/") + f"/{config.language}/"
    config.latex_engine = "uplatex"  # also for English: its cited titles are Japanese
    config.latex_documents = [("index", f"repro-report-{config.language}.tex", _unbroken(config.project),
                               "repro contributors", "manual")]
    config.latex_elements = {"papersize": "a4paper",
                             "extraclassoptions": "openany",  # no blank page before a chapter
                             "preamble": LATEX_PREAMBLE
                             + rf"\renewcommand{{\contentsname}}{{{CONTENTS[config.language]}}}" + "\n"}


def setup(app):
    app.connect("config-inited", _titles)
