"""Every chapter module in repro/chapters, by name."""
from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from . import chapters as package
from .chapter import Chapter
from .errors import ReproError


@cache
def chapters() -> dict[str, Chapter]:
    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        chapter = getattr(module, "CHAPTER", None)
        if isinstance(chapter, Chapter):
            found[chapter.name] = chapter
    return found


def get(name: str) -> Chapter:
    try:
        return chapters()[name]
    except KeyError:
        known = ", ".join(chapters()) or "none"
        raise ReproError(f"unknown chapter {name!r}; known chapters: {known}") from None
