"""What a user installs and cites: the lock matches pyproject.toml's pins and hashes every
file, and CITATION.cff names every source publication the chapters reproduce."""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s;\\]+)")


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked() -> dict[str, tuple[str, int]]:
    """Each locked package: its version and how many sha256 hashes it carries."""
    found: dict[str, tuple[str, int]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.txt").read_text()):
        m = PIN.match(block)
        if m:
            found[_name(m[1])] = (m[2], block.count("--hash=sha256:"))
    return found


def test_the_lock_pins_every_direct_dependency_at_its_version_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = _locked()
    for dep in project["dependencies"]:
        m = PIN.match(dep)
        assert m, f"{dep}: pin each direct dependency with =="
        assert locked.get(_name(m[1]), (None,))[0] == m[2], f"{dep}: run `make lock`"
    assert all(hashes for _, hashes in locked.values()), "every locked file needs its sha256"
    assert len(locked) > len(project["dependencies"]), "the lock holds the transitive ones too"


def test_this_python_is_one_the_project_declares() -> None:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low = tuple(int(x) for x in spec.removeprefix(">=").split("."))
    assert sys.version_info[:len(low)] >= low


def test_citation_names_every_source_publication() -> None:
    cff = (ROOT / "CITATION.cff").read_text()
    titles = {s["title"] for f in (ROOT / "repro/chapters").glob("*/original.toml")
              for s in tomllib.loads(f.read_text())["sources"]}
    assert titles and all(t in cff for t in titles), titles
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
