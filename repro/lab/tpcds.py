"""Tables derived from TPC-DS: generated once per scale factor with DuckDB's dsdgen (the
extension shipped on PyPI, so it works offline), kept as CSV in a cache, loaded with COPY.

The cache holds what a generator run produced and a manifest of the files' sizes and
SHA-256; a file that does not match is regenerated, so a cut-short or damaged cache
costs a regeneration (seconds), never a wrong table.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import duckdb_extension_tpcds
import psycopg
from psycopg import sql as pgsql

from ..errors import ReproError
from ..results import write_atomically
from .servers import Server

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "_build" / "cache" / "tpcds"
GENERATOR = "duckdb dsdgen"


def _extension() -> Path:
    path = (Path(duckdb_extension_tpcds.__file__).parent / "extensions" / f"v{duckdb.__version__}"
            / "tpcds.duckdb_extension")
    if not path.exists():
        raise ReproError(f"duckdb-extension-tpcds does not match duckdb {duckdb.__version__} "
                         f"(no {path}): reinstall requirements.txt")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest(directory: Path) -> dict | None:
    try:
        return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _intact(directory: Path, tables: list[str], sf: float) -> bool:
    m = _manifest(directory)
    if not m or m.get("sf") != sf or not isinstance(m.get("files"), dict):
        return False
    for table in tables:
        entry, path = m["files"].get(table), directory / f"{table}.csv"
        if not entry or not path.exists() or path.stat().st_size != entry.get("bytes") \
                or _sha256(path) != entry.get("sha256"):
            return False
    return True


def _generate(directory: Path, tables: list[str], sf: float) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{_extension()}'")
    con.execute("CALL dsdgen(sf = ?)", [sf])
    files = {}
    for table in tables:
        path = directory / f"{table}.csv"
        con.execute(f"COPY {table} TO '{path}' (HEADER false, DELIMITER '|')")
        rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        files[table] = {"rows": rows, "bytes": path.stat().st_size, "sha256": _sha256(path)}
    con.close()
    manifest = {"generator": f"{GENERATOR} {duckdb.__version__}", "sf": sf, "files": files}
    write_atomically(directory / "manifest.json", json.dumps(manifest, indent=1))  # written last


def dataset(tables: list[str], sf: float) -> dict:
    """The CSV files of `tables` at scale factor `sf`, generated unless the cache has them
    intact; returns the manifest (generator, rows and bytes per table). Runs that take no
    engine lock (against existing servers with this machine's programs, on local clusters)
    may want the same scale factor at once: one generates it while the others wait, then
    find it intact (flock(2) on a file beside the scale factor's directory)."""
    directory = CACHE / f"sf{sf:g}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"sf{sf:g}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _intact(directory, tables, sf):
            _generate(directory, tables, sf)
        return {**_manifest(directory), "directory": str(directory)}


def load(server: Server, data: dict, tables: list[str]) -> None:
    """COPY each table's CSV in (through the client connection: works for any server)."""
    directory = Path(data["directory"])
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        for table in tables:
            copy_in = pgsql.SQL("COPY {} FROM STDIN (FORMAT csv, DELIMITER '|')").format(pgsql.Identifier(table))
            with conn.cursor().copy(copy_in) as copy, \
                    (directory / f"{table}.csv").open("rb") as f:
                while chunk := f.read(1 << 20):
                    copy.write(chunk)
