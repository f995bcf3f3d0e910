"""Result documents: one JSON per run of a chapter on a PostgreSQL major at a scale.

- This build's results, which double as the cache: `_build/results/NAME/pgMAJOR-SCALE.json`
  (REPRO_RESULTS moves them). A result is reused only when its key matches: the
  experiment's key (the code it runs, its files and the scale's parameters:
  fingerprint.experiment), the scale, the image (its recipe and PostgreSQL version) and
  the target.
- Stored results, kept as history and gathered from other machines (as ClickBench keeps
  results/<date>/<machine>.json): `results/NAME/pgMAJOR-SCALE-STARTED.json` in the
  repository, plus any directories in RESULTS (os.pathsep-separated).

An unreadable or malformed file counts as missing, never as a crash.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

FORMAT = 2  # bump when the document layout changes: every cached result goes stale
REQUIRED = ("chapter", "format", "key", "major", "scale", "scale_params", "raw", "provenance")
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "repro"


def build_dir() -> Path:
    return Path(os.environ.get("REPRO_RESULTS", ROOT / "_build" / "results"))


def history() -> Path:
    """The repository's stored results (results/): the project's runs, and contributed ones
    in a folder per machine."""
    return ROOT / "results"


def stored_dirs() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("RESULTS", "").split(os.pathsep) if p]
    return [history(), *extra]


def path_for(chapter: str, major: float, scale: str, target: str = "container") -> Path:
    """This build's result of a chapter on a major at a scale; a run against an existing
    server (target "dsn:...") or on local clusters ("local:<machine>") has a file of its own
    per server or machine, so it never replaces the containers' one, nor another's."""
    kind = "local" if target.startswith("local:") else "dsn"
    suffix = "" if target == "container" else f"-{kind}-" + hashlib.sha256(target.encode()).hexdigest()[:8]
    return build_dir() / chapter / f"pg{major:g}-{scale}{suffix}.json"


class CorruptResult(Exception):
    """The file exists but is not a result document."""


def load(path: Path, chapter: str | None = None) -> dict[str, Any] | None:
    """A result document, None if the file does not exist; CorruptResult if unreadable."""
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptResult(f"{path}: {exc}") from exc
    if (not isinstance(doc, dict) or any(k not in doc for k in REQUIRED)
            or doc.get("format") != FORMAT or (chapter and doc["chapter"] != chapter)):
        raise CorruptResult(f"{path}: not a result document{f' for {chapter}' if chapter else ''} "
                            f"of format {FORMAT}")
    return doc


def write_atomically(path: Path, data: str | bytes) -> None:
    """A temporary file of this process beside `path`, synced, then renamed over it: a
    reader sees the old file or the new one, never half of one, also when two builds
    (the two languages) write the same file at once. A file that holds these bytes already
    is left alone: its time stays, so Sphinx does not reread the pages that link it."""
    data = data.encode() if isinstance(data, str) else data
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(doc: dict[str, Any], path: Path | None = None) -> Path:
    """Write atomically, so an interrupted run never leaves half a file."""
    path = path or path_for(doc["chapter"], doc["major"], doc["scale"], doc["key"]["target"])
    write_atomically(path, json.dumps(doc, ensure_ascii=False, indent=1))
    return path


def archive(doc: dict[str, Any], machine: str | None = None) -> Path:
    """Keep a run in the repository's history, named by when it started: results/NAME/ for
    the project's own machines, results/NAME/MACHINE/ for a contributed run (its machine
    named in its provenance; the pages pool it apart)."""
    stamp = doc["provenance"]["started"][:19].replace(":", "").replace("-", "")
    folder = history() / doc["chapter"]
    if machine is not None:
        doc = {**doc, "provenance": {**doc["provenance"], "machine": machine}}
        folder = folder / machine
    return save(doc, folder / f"pg{doc['major']}-{doc['scale']}-{stamp}.json")


def machines(chapter: str) -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    """Contributed runs of a chapter, by machine (results/NAME/MACHINE/)."""
    found: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for folder in sorted(p for p in (history() / chapter).glob("*") if p.is_dir()):
        for path in sorted(folder.glob("pg*.json")):
            try:
                doc = load(path, chapter)
            except CorruptResult:
                continue
            if doc is not None:
                found.setdefault(folder.name, []).append((path, doc))
    return found


def _paths(chapter: str, build: bool = True) -> list[Path]:
    paths = sorted(build_dir().glob(f"{chapter}/pg*.json")) if build else []
    for d in stored_dirs():
        paths += sorted(d.glob(f"{chapter}/pg*.json"))
    return paths


def files(chapter: str, build: bool = True) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable result of a chapter with its file: this build's (unless `build` is
    False) and the stored ones (each run once, this build's copy first)."""
    found: dict[tuple, tuple[Path, dict[str, Any]]] = {}
    for path in _paths(chapter, build):
        try:
            doc = load(path, chapter)
        except CorruptResult:
            continue
        if doc is not None:
            found.setdefault((doc["major"], doc["scale"], doc["provenance"]["started"]), (path, doc))
    return list(found.values())


def unreadable(chapter: str) -> list[tuple[Path, str]]:
    """The chapter's result files that are not result documents, with why."""
    bad = []
    for path in _paths(chapter):
        try:
            load(path, chapter)
        except CorruptResult as exc:
            bad.append((path, str(exc)))
    return bad


def everything(chapter: str) -> list[dict[str, Any]]:
    """Every readable result of a chapter: this build's and the stored ones (each once)."""
    return [doc for _, doc in files(chapter)]


# -- cache keys -------------------------------------------------------------------------

def source_hash(paths: list[Path]) -> str:
    """Content hash of files, by their path inside the project."""
    digest = hashlib.sha256()
    for path in sorted(set(paths)):
        name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_key(experiment: str, scale: str, image: str | None, target: str) -> dict[str, Any]:
    return {"format": FORMAT, "experiment": experiment, "scale": scale, "image": image,
            "target": target}


def is_fresh(doc: dict[str, Any] | None, key: dict[str, Any]) -> bool:
    """Whether a stored result answers for this key; image None means "any image"."""
    if doc is None:
        return False
    stored = doc["key"]
    return all(stored.get(k) == v for k, v in key.items() if not (k == "image" and v is None))
