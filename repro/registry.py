"""Every chapter package in repro/chapters, by name (the package's name), built by
convention: a package's `__init__.py` gives its TITLE and SHORT name (and REQUIRES, what the whole chapter
needs, MACHINE_BOUND, why its values depend on the machine, and BESIDE, the images of the servers a run starts
beside its major's; else nothing), `analysis.summarize`, `findings.FINDINGS` and `page.TABLES`,
`page.CHARTS`, `page.numbers` give the rest (a page without tables, charts or numbers
may leave them out). Only the lab imports `experiment.py` (`experiment()` below): it
imports the lab.

A chapter that fails to load breaks itself only: the others load, `broken()` names it with
its error in one line (printed once to stderr), and `get()` of it raises that line."""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from . import chapters as package
from .chapter import Chapter
from .errors import ReproError


def build(init: ModuleType) -> Chapter:
    """A chapter from its imported package (`init`) and that package's modules."""
    analysis, findings, page = (importlib.import_module(f"{init.__name__}.{m}")
                                for m in ("analysis", "findings", "page"))
    defaults = Chapter.__dataclass_fields__
    return Chapter(title=init.TITLE, short=init.SHORT, summarize=analysis.summarize, findings=findings.FINDINGS,
                   tables=getattr(page, "TABLES", None) or defaults["tables"].default_factory(),
                   charts=getattr(page, "CHARTS", None) or defaults["charts"].default_factory(),
                   numbers=getattr(page, "numbers", defaults["numbers"].default),
                   requires=list(getattr(init, "REQUIRES", [])),
                   machine_bound=getattr(init, "MACHINE_BOUND", None), beside=tuple(getattr(init, "BESIDE", ())),
                   name=init.__name__.rsplit(".", 1)[-1],
                   package=Path(init.__file__).parent)


@cache
def _loaded() -> tuple[dict[str, Chapter], dict[str, str]]:
    """(the chapters that load, {name: one line saying why it does not} for the others)."""
    good, bad = {}, {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        try:
            good[info.name] = build(importlib.import_module(f"{package.__name__}.{info.name}"))
        except Exception as exc:  # any error in a contributor's chapter: reported, not raised
            bad[info.name] = f"chapter {info.name} does not load: {type(exc).__name__}: {exc}".splitlines()[0]
            print(bad[info.name], file=sys.stderr)
    return good, bad


def chapters() -> dict[str, Chapter]:
    """Every chapter that loads, by name."""
    return _loaded()[0]


def broken() -> dict[str, str]:
    """The chapter packages that do not load, each with its error in one line."""
    return _loaded()[1]


def names() -> list[str]:
    """Every chapter package, loaded or not: a test per chapter then fails for a broken one."""
    return sorted([*chapters(), *broken()])


def experiment(chapter: Chapter) -> ModuleType:
    """The chapter's experiment module, imported from its package's file (a scaffolded
    chapter may live outside repro/chapters): the one place it is imported, by the lab only,
    since it imports the lab."""
    name = f"repro.chapters.{chapter.name}.experiment"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, chapter.package / "experiment.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def get(name: str) -> Chapter:
    if name in broken():
        raise ReproError(broken()[name])
    try:
        return chapters()[name]
    except KeyError:
        known = ", ".join(chapters()) or "none"
        raise ReproError(f"unknown chapter {name!r}; known chapters: {known}") from None
