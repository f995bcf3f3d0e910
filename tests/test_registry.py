"""A chapter that does not load breaks itself only (repro/registry.py): the other chapters
load, the broken one is named with its error in one line, and asking for it raises that."""
from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import repro.chapters
from repro import registry
from repro.errors import ReproError


@pytest.fixture
def broken_chapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A chapter package beside the real ones whose findings module has a syntax error."""
    package = tmp_path / "zz_broken"
    package.mkdir()
    (package / "__init__.py").write_text('from repro.text import Text\nTITLE = Text("壊れた章", "Broken")\n')
    (package / "analysis.py").write_text("def summarize(raw, params):\n    return {}\n")
    (package / "findings.py").write_text("FINDINGS = [\n")  # never closed
    monkeypatch.setattr(repro.chapters, "__path__", [*repro.chapters.__path__, str(tmp_path)])
    registry._loaded.cache_clear()
    yield "zz_broken"
    registry._loaded.cache_clear()


def test_a_broken_chapter_breaks_itself_only(broken_chapter: str, capsys: pytest.CaptureFixture[str]) -> None:
    loaded = registry.chapters()
    assert broken_chapter not in loaded and {"auto_explain", "eic", "wait_events"} <= set(loaded)
    line = registry.broken()[broken_chapter]
    assert line.startswith(f"chapter {broken_chapter} does not load: SyntaxError") and "\n" not in line
    assert capsys.readouterr().err.strip() == line  # said once, on stderr
    assert broken_chapter in registry.names()
    with pytest.raises(ReproError, match="does not load"):
        registry.get(broken_chapter)


def test_a_page_may_leave_out_tables_charts_and_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """build() falls back on the Chapter's defaults when page.py declares none of them."""
    chapter = registry.chapters()["auto_explain"]
    assert chapter.tables and chapter.charts  # the real ones are read, not the defaults
    init = types.ModuleType("repro.chapters.auto_explain")
    init.__file__ = str(chapter.package / "__init__.py")
    init.TITLE, init.SHORT = chapter.title, chapter.short
    monkeypatch.setitem(sys.modules, "repro.chapters.auto_explain.page", types.ModuleType("page"))
    bare = registry.build(init)
    assert bare.tables == {} and bare.charts == {} and bare.numbers(None) == {}
