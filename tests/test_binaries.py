"""Which of this machine's PostgreSQL binaries a local run (--server local) takes, and the
one line it gives when there are none of the major asked for."""
from __future__ import annotations

from pathlib import Path

import pytest

from existing_server import binaries as debian_binaries
from repro.errors import ReproError
from repro.lab.binaries import binaries

pytestmark = pytest.mark.skipif(debian_binaries() is None, reason="Debian's PostgreSQL is not installed here")


def test_debians_binaries_are_found_with_their_version_and_features(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PG_BINDIR", raising=False)
    major = float(debian_binaries().parent.name)  # type: ignore[union-attr]
    found = binaries(major)
    assert found.bindir == debian_binaries() and found.source == "Debian's postgresql package"
    assert found.version.startswith(f"{major:g}.")
    image = found.image()
    assert image.origin == "local" and image.version == found.version and "pg_walinspect" in image.features


def test_a_variable_for_the_major_wins_and_a_wrong_one_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    major = float(debian_binaries().parent.name)  # type: ignore[union-attr]
    monkeypatch.setenv(f"PG_BINDIR_{major:g}", str(debian_binaries()))
    assert binaries(major).source == f"PG_BINDIR_{major:g}"
    monkeypatch.setenv("PG_BINDIR_9_6", str(debian_binaries()))
    with pytest.raises(ReproError, match=rf"^PG_BINDIR_9_6=\S+ holds PostgreSQL {major:g}\.\d+, not 9\.6$"):
        binaries(9.6)


def test_no_binaries_of_a_major_is_one_line_that_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.delenv("PG_BINDIR_9_6", raising=False)
    monkeypatch.setenv("PG_BINDIR", str(tmp_path))
    with pytest.raises(ReproError) as caught:
        binaries(9.6)
    assert "\n" not in str(caught.value) and "PG_BINDIR_9_6" in str(caught.value)
