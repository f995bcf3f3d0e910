"""Sphinx configuration: Japanese sources in docs/, English through locale/ (sphinx-intl).

Build with `make html`; it runs `sphinx-build -c . docs _build/html/<lang>` per language.
"""
import os
import sys
from pathlib import Path

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


def _titles(app, config):
    config.project, config.html_title, config.copyright = TITLES[config.language]
    app.tags.add(config.language)  # ```{only} ja``` / ```{only} en```: a diagram drawn per language
    if os.environ.get("REPRO_BASEURL"):  # the site's public address: canonical links, og:url, sitemap
        config.html_baseurl = os.environ["REPRO_BASEURL"].rstrip("/") + f"/{config.language}/"
    config.latex_engine = "uplatex"  # also for English: its cited titles are Japanese
    config.latex_documents = [("index", f"repro-report-{config.language}.tex", config.project,
                               "repro contributors", "manual")]


def setup(app):
    app.connect("config-inited", _titles)
