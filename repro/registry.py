"""Every chapter package in repro/chapters, by name (the package's name)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from . import chapters as package
from .chapter import Chapter
from .errors import ReproError


@cache
def chapters() -> dict[str, Chapter]:
    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        chapter = getattr(module, "CHAPTER", None)
        if isinstance(chapter, Chapter):
            chapter.name, chapter.package = info.name, Path(module.__file__).parent
            found[info.name] = chapter
    return found


def get(name: str) -> Chapter:
    try:
        return chapters()[name]
    except KeyError:
        known = ", ".join(chapters()) or "none"
        raise ReproError(f"unknown chapter {name!r}; known chapters: {known}") from None
