"""Rules of the machines this project runs on, checked on every committed file.

No committed file names a package registry's host: the Debian mirror is read from the
machine's apt sources, Maven and pip use their own configuration. The hosts are known
here only by a prefix of their sha256, so this file does not name them either; the mirror
hosts of the machine the tests run on are read from its configuration and checked too.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# sha256[:24] of the public hosts of Debian, Maven Central, the Go module proxy, PyPI, npm,
# the Rust crate registry, PGDG and Groonga's package repositories
REGISTRY_HOSTS = {
    "e680c440a2e92079ab1bf7a9", "1ba4e37997a2e986efa6cd84", "c2b35955576ffa710bfb7c4e",
    "2e97613f5a81eaa4f8a58f55", "26b795f2a123f2a2ae16327a", "04280276b5029dcaa286ca72",
    "74a73e3f02a4ba30361ecba3", "43c04ed1dabe979b9c552549", "317d2d52829b78129d2c9e43",
    "095fbbaf0076d564cb46efd3", "b18b7bf677c9e874ec01f2fa", "00a7dc5a0cc388586b866584",
    "9da5f32d964125123cc368f2", "048e76c14ef34200a2fd1bff", "a4aa2ac280bb8d1a0ce7a1be",
    "c899567ee906851741bf7f3b", "d6d7019ca9fcbf07c769e445", "9495278a74715c7e246a3640",
    "0dc11026ac75c015aaa1deaf", "70bb4000cd2fab03af01fed0", "fd0c6a9279196963adad509f",
    "789e46d79514e28093cabe2b", "3d01f3609be82d98eeedcd97", "eb7e11c7f9ecbcf48099060e",
    "ad41c2b07d1538e576df1442", "8a580e8303c3393b81b93b6c", "b8e035ab2f637104c1bd18d7",
}
HOST = re.compile(r"(?<![\w.-])((?:[a-z0-9-]+\.)+[a-z]{2,})(?![\w-])", re.IGNORECASE)
URL_HOST = re.compile(r"[a-z][a-z0-9+.-]*://(?:[^/@\s]*@)?([^/:\s\"'>]+)", re.IGNORECASE)


def _digest(host: str) -> str:
    return hashlib.sha256(host.lower().encode()).hexdigest()[:24]


def machine_registry_hosts() -> set[str]:
    """The hosts of the package sources this machine is configured with (apt, pip, Maven,
    npm, Go), as digests."""
    texts = []
    apt = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]
    for path in [*apt, Path("/etc/pip.conf"), Path.home() / ".config/pip/pip.conf",
                 Path.home() / ".pip/pip.conf", Path.home() / ".m2/settings.xml",
                 Path.home() / ".npmrc", Path.home() / ".cargo/config.toml"]:
        try:
            texts.append(path.read_text(errors="replace"))
        except OSError:
            continue
    texts += [os.environ.get(k, "") for k in ("GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")]
    return {_digest(h) for text in texts for h in URL_HOST.findall(text)}


def committed_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in out.decode().split("\0") if name]


def named_hosts(text: str, digests: set[str]) -> set[str]:
    return {h for h in HOST.findall(text) if _digest(h) in digests}


def test_the_check_recognises_a_registry_host() -> None:
    """The digests really are those of the registries' hosts: a URL built from parts here
    (so that this file does not carry it) is caught."""
    host = ".".join(["deb", "debian", "org"])
    assert named_hosts(f"deb http://{host}/debian bookworm main", REGISTRY_HOSTS) == {host}
    assert named_hosts("see https://www.postgresql.org/docs/", REGISTRY_HOSTS) == set()


def test_no_committed_file_names_a_registry_host() -> None:
    digests = REGISTRY_HOSTS | machine_registry_hosts()
    found = []
    for path in committed_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files carry no addresses we write
        for host in sorted(named_hosts(text, digests)):
            found.append(f"{path.relative_to(ROOT)}: {host}")
    assert not found, "committed files name a package registry's host:\n" + "\n".join(found)


@pytest.mark.parametrize("recipe", ["images/build.sh", "images/lib.sh", "images/semaphores/ensure.sh",
                                    "scripts/install-system.sh"])
def test_recipes_download_nothing_themselves(recipe: str) -> None:
    """Images get third-party software through apt and Maven only: no curl or wget in a
    recipe, and no source archive compiled."""
    text = (ROOT / recipe).read_text(encoding="utf-8")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert not re.search(r"\b(curl|wget)\b", code)
    assert not re.search(r"\.tar\.gz|\.zip\b", code)


# What takes CPUs without measuring, in the Makefile's recipes: each must go aside of the
# chapters' measuring runs (scripts/aside.sh holds the run lock shared), or go through a
# script that does (scripts/ensure-images.sh).
BUSY = ("sphinx-build", "$(SPHINX)", "check_po.py", "go install", "test_images.py", '"not measures"')


def test_work_that_measures_nothing_goes_aside_in_the_makefile() -> None:
    recipes = [line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("\t")]
    busy = [line for line in recipes if any(b in line for b in BUSY)
            and not line.strip().lstrip("@").startswith("echo ")]
    assert len(busy) >= 6, busy  # the check still finds what it looks for
    assert [line for line in busy if "$(ASIDE)" not in line] == []
