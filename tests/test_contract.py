"""Every chapter keeps the chapter contract's wiring: page, catalogue, test, table of contents."""
from pathlib import Path

import pytest

from repro import registry

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(registry.chapters())


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_is_wired(name: str) -> None:
    chapter = registry.get(name)
    page = ROOT / "docs" / "chapters" / f"{name}.md"
    assert page.exists()
    text = page.read_text()
    for directive in ("repro-status", "repro-findings", "repro-provenance", "repro-download"):
        assert f"{{{directive}}} {name}" in text, directive
    for table in chapter.tables:
        assert f"{{repro-table}} {name} {table}" in text, table
    for chart in chapter.charts:
        assert f"{{repro-chart}} {name} {chart}" in text, chart
    assert (ROOT / "locale" / "en" / "LC_MESSAGES" / "chapters" / f"{name}.po").exists()
    assert (ROOT / "tests" / f"test_chapter_{name}.py").exists()
    assert f"chapters/{name}\n" in (ROOT / "docs" / "index.md").read_text()
    assert set(chapter.scales) == {"tiny", "default", "full"}
    assert len({f.id for f in chapter.findings}) == len(chapter.findings)
