"""`python -m repro new NAME`: everything a new chapter needs, wired in.

It copies the template folder (repro/templates/chapter/, laid out as the project is) into
the project, with NAME for each `{{name}}` in the files' paths and texts: a chapter package
whose experiment is small and works (synchronous_commit on vs off under pgbench TPC-B), its
page, the page's English catalogue and its test; it adds the line in the table of contents
and registers the example's claims. The sources table and the README's chapter list are
generated from the chapters' own files. The contributor replaces the example.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from . import claims
from .chapter import Chapter
from .errors import ReproError
from .readme import update_readme
from .registry import build, chapters
from .text import Text

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "templates" / "chapter"
PLACEHOLDER = "{{name}}"


def template_files() -> list[Path]:
    """The template's files, relative to its folder (and so to the project)."""
    return sorted(p.relative_to(TEMPLATE) for p in TEMPLATE.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def create(name: str, root: Path = ROOT) -> list[Path]:
    """Write a new chapter's package, page, catalogue and test from the template; add it to
    the table of contents, the README's chapter list and CITATION.cff's references."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ReproError(f"chapter names are lower-case identifiers (a-z, 0-9, _), not {name!r}")
    if name in chapters() or (root / "repro" / "chapters" / name).exists():
        raise ReproError(f"chapter {name!r} exists already")
    files = {root / str(rel).replace(PLACEHOLDER, name):
             (TEMPLATE / rel).read_text(encoding="utf-8").replace(PLACEHOLDER, name)
             for rel in template_files()}
    for path in files:
        if path.exists():
            raise ReproError(f"{path.relative_to(root)} exists already")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    index = root / "docs" / "index.md"
    toc = index.read_text(encoding="utf-8")
    last = list(re.finditer(r"^chapters/\w+\n", toc, flags=re.M))[-1]
    index.write_text(toc[:last.end()] + f"chapters/{name}\n" + toc[last.end():], encoding="utf-8")
    readme = update_readme(root, extra=[name])
    chapter = load(root, name)
    return [*files, index, *([readme] if readme else []), _cite(root, chapter), _register_example(chapter)]


def load(root: Path, name: str) -> Chapter:
    """A chapter package under `root` (the project, or a copy of it), imported from its files
    as the registry would import it."""
    package = root / "repro" / "chapters" / name
    spec = importlib.util.spec_from_file_location(f"repro.chapters.{name}", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return build(module)


def _cite(root: Path, chapter: Chapter) -> Path:
    """The chapter's sources in CITATION.cff's references (tests/test_packaging.py holds it to
    every source title): the contributor completes them as the sources' entries."""
    path = root / "CITATION.cff"
    cff = path.read_text(encoding="utf-8")
    entries = [f'  - type: generic\n    title: "{s["title"]}"\n    authors:\n      - name: "{s["by"]["en"]}"\n'
               f'    notes: "(replace: the type, the date, the address and what the chapter measures of it)"\n'
               for s in chapter.original["sources"] if f'title: "{s["title"]}"' not in cff]
    path.write_text(cff.rstrip("\n") + "\n" + "".join(entries), encoding="utf-8")
    return path


def _register_example(chapter: Chapter) -> Path:
    """The example's claims and size, registered as made, before any run: the tests hold a
    chapter to its register from its first commit; the contributor's own claims are a
    revision, registered before the runs that judge them."""
    claims.register(chapter, EXAMPLE_WHY.en, why_ja=EXAMPLE_WHY.ja)
    claims.register_sizes(chapter)
    return claims.path(chapter)


EXAMPLE_WHY = Text("ひな形の例を、作ったときに (実行の前に) 登録しました。例を置き換えたら、判定する実行の前に "
                   "`repro register` で自分の主張を登録します。",
                   "The scaffold's example, registered when it was made (before any run). Replace it, and register "
                   "your own claims with `repro register` before the runs that judge them.")
