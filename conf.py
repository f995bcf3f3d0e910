"""Sphinx configuration: Japanese sources in docs/, English through locale/ (sphinx-intl).

Build with `make html`; it runs `sphinx-build -c . docs _build/html/<lang>` per language.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

project = "PostgreSQL 性能検証レポート (再現可能版)"
author = "repro contributors"
copyright = "2026, repro contributors; source publications belong to their authors"
language = "ja"

extensions = [
    "myst_parser",
    "sphinx_copybutton",
    "sphinxcontrib.plantuml",
    "repro.sphinxext",
]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_templates", "_root", "_static"]

locale_dirs = ["../locale/"]  # relative to the source directory (docs/)
gettext_compact = False  # one catalogue per page, e.g. locale/en/LC_MESSAGES/chapters/auto_explain.po
gettext_uuid = False
gettext_location = False

nitpicky = True
numfig = True
numfig_secnum_depth = 0

html_theme = "furo"
templates_path = ["docs/_templates"]  # relative to this file (the configuration directory)
html_static_path = ["docs/_static"]
html_css_files = ["repro.css"]
html_favicon = "docs/_static/favicon.svg"
html_sidebars = {"**": ["sidebar/brand.html", "sidebar/language.html", "sidebar/search.html",
                        "sidebar/scroll-start.html", "sidebar/navigation.html",
                        "sidebar/scroll-end.html"]}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False

plantuml = "plantuml"
plantuml_output_format = "svg_img"

copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True


TITLES = {  # (project, short title for the sidebar) per language; -D language=... picks one
    "ja": ("PostgreSQL 性能検証レポート (再現可能版)", "PostgreSQL 性能検証レポート"),
    "en": ("PostgreSQL performance verification report (reproducible)",
           "PostgreSQL verification report"),
}


def _titles(app, config):
    config.project, config.html_title = TITLES[config.language]


def setup(app):
    app.connect("config-inited", _titles)
