"""ARCHITECTURE.md is the map of the code: it names every module of repro/, so a module
that is added or moved without its line fails here (the templates' are the scaffold's)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def test_the_architecture_names_every_module() -> None:
    named = set(re.findall(r"[\w]+\.py\b", MAP))
    modules = {p.name for p in (ROOT / "repro").rglob("*.py") if "templates" not in p.parts}
    assert modules - named == set()
