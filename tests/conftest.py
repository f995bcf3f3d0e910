"""Shared fixtures. Tests never write to _build/results: results go to a private directory."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ["REPRO_RESULTS"] = tempfile.mkdtemp(prefix="repro-test-results-")

from repro import registry, results, runner  # noqa: E402


@pytest.fixture(scope="session")
def tiny_results() -> dict[str, tuple[dict, list[str]]]:
    """Every chapter run once at tiny scale: {name: (result, lines the run printed)}.

    Before the run, each result file is replaced by garbage: the run must say so
    and run again instead of crashing.
    """
    done = {}
    for name, chapter in registry.chapters().items():
        path = results.path_for(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{ not json", encoding="utf-8")
        lines: list[str] = []
        doc, reused = runner.run(chapter, "tiny", out=lines.append)
        assert not reused
        done[name] = (doc, lines)
    return done


@pytest.fixture
def data_dir() -> Path:
    return Path(__file__).parent / "data"
