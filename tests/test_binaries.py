"""Which of this machine's PostgreSQL binaries a local run (--server local) takes, the one
line it gives when there are none of the major asked for, and `make binaries`, which unpacks
zonky's relocatable ones and compiles the client programs they lack (scripts/binaries.py,
scripts/client-programs.sh)."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from existing_server import binaries as debian_binaries
from repro import majors, registry
from repro.errors import ReproError
from repro.lab import binaries as module
from repro.lab import local_cleanup
from repro.lab import runner
from repro.lab.binaries import NoBinaries, as_owner, binaries
from repro.lab.harness.progress import Progress
from repro.lab.local import LocalLab
from repro.lab.local_context import LocalRunContext
from repro.lab.local_client import LOCAL_PROGRAMS, LocalClient
from repro.results import ROOT

pytestmark = pytest.mark.skipif(debian_binaries() is None, reason="Debian's PostgreSQL is not installed here")


def test_debians_binaries_are_found_with_their_version_and_features(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PG_BINDIR", raising=False)
    major = float(debian_binaries().parent.name)  # type: ignore[union-attr]
    found = binaries(major)
    assert found.bindir == debian_binaries() and found.source == "Debian's postgresql package"
    assert found.version.startswith(f"{major:g}.")
    image = found.image({})
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
    monkeypatch.setattr(module, "CACHE", tmp_path / "none")
    with pytest.raises(ReproError) as caught:
        binaries(9.6)
    assert "\n" not in str(caught.value) and "PG_BINDIR_9_6" in str(caught.value)
    assert "make binaries MAJORS=9.6" in str(caught.value)


def _make_binaries(cache: Path, *majors: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/binaries.py", *majors], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "REPRO_BINARIES": str(cache)})


@pytest.mark.skipif(any(Path(d).exists() for d in ("/usr/lib/postgresql/11", "/usr/pgsql-11")),
                    reason="a package's 11 is installed here, which a run takes first")
def test_make_binaries_unpacks_a_zonky_major_where_a_local_run_finds_it(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    """11, as partitions' server beside a local run needs it: the images' pinned jar (make
    images fetched it; else Maven does) unpacked under the cache, found by `binaries` with
    its version, its contrib read from its own tree (it has no pg_config); a second call
    unpacks nothing again, a tree of another version is replaced."""
    made = _make_binaries(tmp_path, "11")
    assert made.returncode == 0, made.stderr
    monkeypatch.setattr(module, "CACHE", tmp_path)
    for variable in ("PG_BINDIR", "PG_BINDIR_11"):
        monkeypatch.delenv(variable, raising=False)
    found = binaries(11)
    assert found.bindir == tmp_path / "11" / "bin" and found.source.startswith("make binaries")
    assert found.version.startswith("11.") and found.config("--sharedir") == tmp_path / "11" / "share" / "postgresql"
    assert (found.config("--sharedir") / "extension" / "plpgsql.control").is_file()
    assert oct((tmp_path / "11" / "lib").stat().st_mode & 0o755) == "0o755"  # the clusters' user enters it
    made_at = (tmp_path / "11" / "bin" / "postgres").stat().st_ino  # tar keeps mtimes
    assert _make_binaries(tmp_path, "11").returncode == 0
    assert (tmp_path / "11" / "bin" / "postgres").stat().st_ino == made_at
    (tmp_path / "11" / ".zonky-version").write_text("11.0.0\n")  # another version's tree
    assert _make_binaries(tmp_path, "11").returncode == 0
    assert (tmp_path / "11" / "bin" / "postgres").stat().st_ino != made_at
    assert [p.name for p in tmp_path.iterdir()] == ["11"]  # nothing half-made left beside it


@pytest.mark.parametrize("args, code, words", [(["8"], 1, "PostgreSQL 8 is not one of the majors"),
                                               ([], 2, "usage: scripts/binaries.py MAJOR")])
def test_make_binaries_of_a_major_it_cannot_unpack_is_one_line(tmp_path: Path, args: list[str], code: int,
                                                               words: str) -> None:
    made = _make_binaries(tmp_path, *args)
    assert made.returncode == code and words in made.stderr and len(made.stderr.splitlines()) == 1, made.stderr
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@functools.cache
def _pins() -> dict[str, str]:
    """Each major's pinned zonky version, as scripts/binaries.py reads it."""
    out = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'scripts'); import binaries; "
                          "from repro.majors import MAJORS, name; "
                          "print(*(f'{name(m)}={binaries.pinned(name(m))[0]}' for m in MAJORS))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return dict(pair.split("=") for pair in out.stdout.split())


def test_every_major_has_one_pinned_jar_the_images_or_the_local_ones() -> None:
    """lib.sh pins the jars of the majors the offline images take from zonky, LOCAL_ONLY those
    of the other four (Debian's in the images): every major has exactly one, of itself."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import binaries as script
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    from_images = subprocess.run(["bash", "-c", ". images/lib.sh; for m in $MAJORS; do zonky_version $m > /dev/null "
                                  "&& echo $m; done"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not set(from_images) & set(script.LOCAL_ONLY)
    pins = _pins()
    assert sorted(pins, key=float) == sorted([*from_images, *script.LOCAL_ONLY], key=float) and len(pins) == 10
    assert all(version.startswith(f"{major}.") for major, version in pins.items()), pins


@pytest.fixture(scope="module")
def every_major() -> Iterator[Path]:
    """`make binaries` of the ten majors into a cache of the tests' own, which the clusters'
    user may enter (pytest's temporary directories are root's alone): their relocatable
    servers, and the client programs of the newest major, which it compiles here since
    Debian's of this machine are older."""
    cache = Path(tempfile.mkdtemp(prefix="repro-test-binaries-"))
    try:
        cache.chmod(0o755)
        made = _make_binaries(cache, *[majors.name(m) for m in majors.MAJORS])
        assert made.returncode == 0, made.stderr
        yield cache
    finally:
        shutil.rmtree(cache)


NEWEST = majors.name(majors.MAJORS[-1])
NEWEST_INSTALLED = pytest.mark.skipif(any(Path(d).exists() for d in (f"/usr/lib/postgresql/{NEWEST}",
                                                                     f"/usr/pgsql-{NEWEST}")),
                                      reason="a package of the newest major is installed: nothing is compiled")


@NEWEST_INSTALLED
def test_make_binaries_compiles_the_newest_majors_client_programs_once(every_major: Path) -> None:
    """The client programs zonky does not pack, of the newest major, from Debian's source
    package: runnable by the clusters' user, their source named, not compiled again."""
    newest = NEWEST
    bindir = every_major / "client" / "bin"
    for program in LOCAL_PROGRAMS:
        said = subprocess.run(as_owner([str(bindir / program), "--version"]), capture_output=True, text=True)
        assert said.stdout.startswith(f"{program} (PostgreSQL) {newest}."), said
    assert (every_major / "client" / ".source").read_text().startswith(f"postgresql-{newest} ")
    made_at = (bindir / "psql").stat().st_ino
    again = _make_binaries(every_major, newest)
    assert again.returncode == 0 and "client programs" not in again.stdout, again.stdout
    assert (bindir / "psql").stat().st_ino == made_at
    assert sorted(p.name for p in every_major.iterdir()) == sorted(["client", *map(majors.name, majors.MAJORS)])


@pytest.mark.parametrize("major", [majors.name(m) for m in majors.MAJORS])
def test_every_major_starts_from_its_relocatable_binaries(major: str, every_major: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """With `make binaries` alone a machine gets all ten majors: each server starts from its
    pinned jar, of the pinned version, and a standby streams from it, made by the client
    programs the lab takes (this machine's package's where they are of the major or newer,
    else those compiled). pg_basebackup -R of a newer client writes options the server's
    own older libpq refuses, which the lab leaves out."""
    monkeypatch.setenv(f"PG_BINDIR_{major.replace('.', '_')}", str(every_major / major / "bin"))
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.setattr(module, "CLIENT", every_major / "client")
    with LocalLab(majors.parse(major)) as lab:
        primary = lab.server("primary", {"wal_level": "replica", "max_wal_senders": "4",
                                        "max_replication_slots": "4"}, alias="primary")
        [(version,)] = primary.sql("SHOW server_version")
        assert f"{_pins()[major]}.".startswith(f"{version}."), version
        standby = lab.standby(primary, lab.network(), "s1", {"hot_standby": "on"})  # off by default in 9.6
        assert standby.sql("SELECT pg_is_in_recovery()") == [(True,)]
        directory = lab.directory
    assert not directory.exists()


def test_relocatable_binaries_take_the_newest_adequate_client_programs(every_major: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """zonky packs no client programs: a lab of its 11 takes those of the newest package's
    directory (Debian's here), with their versions, also when PG_BINDIR names the server's
    own directory (binaries() reads it as one); the run's key then names those versions. A
    major newer than the package's takes those `make binaries` compiled."""
    monkeypatch.setenv("PG_BINDIR", str(every_major / "11" / "bin"))
    monkeypatch.delenv("PG_BINDIR_11", raising=False)
    monkeypatch.setattr(module, "CLIENT", every_major / "client")
    bindir, versions = LocalClient.of_binaries(every_major / "11" / "bin", 11, every_major / "client")
    assert bindir == str(debian_binaries()) and sorted(versions) == sorted(LOCAL_PROGRAMS)
    assert all(f"(PostgreSQL) {debian_binaries().parent.name}." in line  # type: ignore[union-attr]
               for line in versions.values()), versions
    found = binaries(11)
    assert found.bindir == every_major / "11" / "bin" and found.image(versions).key != found.image({}).key
    newest = majors.MAJORS[-1]
    if Path(f"/usr/lib/postgresql/{NEWEST}").exists() or Path(f"/usr/pgsql-{NEWEST}").exists():
        return  # a package of the newest major is installed, and taken first
    bindir, versions = LocalClient.of_binaries(every_major / majors.name(newest) / "bin", newest, every_major / "client")
    assert bindir == str(every_major / "client" / "bin"), bindir
    assert versions["pgbench"].startswith(f"pgbench (PostgreSQL) {majors.name(newest)}.")


def test_relocatable_binaries_with_older_client_programs_are_one_line_and_leave_nothing(
        every_major: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab of a zonky major newer than this machine's client programs (Debian's, none
    compiled) says so in one line before it makes anything: the programs must be of the
    server's major or newer, and `make binaries` compiles them."""
    client_major = float(debian_binaries().parent.name)  # type: ignore[union-attr]
    newer = [m for m in majors.MAJORS if m > client_major]
    if not newer:
        pytest.skip("this machine's client programs are of the newest major")
    name = majors.name(newer[-1])
    monkeypatch.setenv(f"PG_BINDIR_{name}", str(every_major / name / "bin"))
    monkeypatch.delenv("PG_BINDIR", raising=False)
    monkeypatch.setattr(module, "CLIENT", every_major / "none")
    before = set(Path(tempfile.gettempdir()).glob(f"{local_cleanup.PREFIX}*"))
    with pytest.raises(ReproError) as caught:
        LocalLab(newer[-1])
    said = str(caught.value)
    assert "\n" not in said and f"older than the server's PostgreSQL {name}" in said and "make binaries" in said, said
    assert set(Path(tempfile.gettempdir()).glob(f"{local_cleanup.PREFIX}*")) == before


@pytest.mark.parametrize("args, code, words", [(["14", "TARGET"], 2, "no Debian suite here serves postgresql-14"),
                                               (["18"], 1, "usage: client-programs.sh MAJOR TARGET")])
def test_client_programs_it_cannot_compile_are_one_line_and_leave_nothing(tmp_path: Path, args: list[str],
                                                                           code: int, words: str) -> None:
    """A major no Debian suite here serves (14's images are zonky's), or no target: one line,
    and neither the target nor a scratch directory is left."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    made = subprocess.run(["scripts/client-programs.sh", *[str(tmp_path / a) if a == "TARGET" else a for a in args]],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "TMPDIR": str(scratch)})
    assert made.returncode == code and words in made.stderr and len(made.stderr.splitlines()) == 1, made.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"] and not any(scratch.iterdir())


@pytest.mark.skipif(any(Path(d).exists() for d in ("/usr/lib/postgresql/11", "/usr/pgsql-11")),
                    reason="a package's 11 is installed here")
def test_a_server_beside_a_local_run_without_its_binaries_is_left_out_and_said(
        every_major: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """partitions' 11 beside a local run of Debian's major, with no binaries of 11: the run's
    context gives no lab, says why, and records the major, so the findings that compare
    with it are left out (Finding.beside) and a stored run of it runs again once the
    binaries are there (runner._beside_found). A PG_BINDIR_11 with no postgres is a wrong
    setting, one line, not a missing server."""
    monkeypatch.setattr(module, "CACHE", tmp_path / "none")
    for variable in ("PG_BINDIR", "PG_BINDIR_11"):
        monkeypatch.delenv(variable, raising=False)
    said: list[str] = []
    with LocalLab(float(debian_binaries().parent.name)) as lab, ExitStack() as stack:  # type: ignore[union-attr]
        ctx = LocalRunContext(registry.get("partitions"), {}, lab, Progress("partitions", out=said.append))
        assert ctx.beside(stack, 11) is None and ctx.raw["beside_missing"] == ["11"]
        assert any("without 11 beside: no PostgreSQL 11 server programs" in line for line in said), said
        assert not runner._beside_found({"raw": ctx.raw})
        monkeypatch.setenv("PG_BINDIR_11", str(tmp_path))
        with pytest.raises(ReproError) as caught:
            ctx.beside(stack, 11)
        assert not isinstance(caught.value, NoBinaries) and str(caught.value) == f"PG_BINDIR_11={tmp_path} has no postgres to run"
        monkeypatch.setenv("PG_BINDIR_11", str(every_major / "11" / "bin"))
        assert runner._beside_found({"raw": ctx.raw})
