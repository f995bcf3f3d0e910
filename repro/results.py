"""Result documents: one JSON per chapter run, doubling as the cache.

A result is reused only when its key matches: the chapter module's source
hash, the scale, the PostgreSQL image id and the target (container or DSN).
An unreadable or malformed file counts as missing, never as a crash.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

FORMAT = 1  # bump when the document layout changes: every cached result goes stale
REQUIRED = ("chapter", "format", "key", "scale", "summary", "findings", "provenance", "raw")


def results_dir() -> Path:
    """Where results live: REPRO_RESULTS or _build/results under the project."""
    default = Path(__file__).resolve().parent.parent / "_build" / "results"
    return Path(os.environ.get("REPRO_RESULTS", default))


def path_for(chapter: str) -> Path:
    return results_dir() / f"{chapter}.json"


def source_hash(paths: list[Path]) -> str:
    """Content hash of source files (order-independent of where they live)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_key(module_hash: str, scale: str, image_id: str | None, target: str) -> dict[str, Any]:
    return {"format": FORMAT, "module": module_hash, "scale": scale, "image": image_id,
            "target": target}


class CorruptResult(Exception):
    """The file exists but is not a result document."""


def load(chapter: str) -> dict[str, Any] | None:
    """The stored result, None if there is none; CorruptResult if unreadable."""
    path = path_for(chapter)
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptResult(f"{path}: {exc}") from exc
    if not isinstance(doc, dict) or any(k not in doc for k in REQUIRED) or doc["chapter"] != chapter:
        raise CorruptResult(f"{path}: not a result document for {chapter}")
    return doc


def save(doc: dict[str, Any]) -> Path:
    """Write atomically, so an interrupted run never leaves half a file."""
    path = path_for(doc["chapter"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def is_fresh(doc: dict[str, Any] | None, key: dict[str, Any]) -> bool:
    """Whether a stored result answers for this key; image None means "any image"."""
    if doc is None:
        return False
    stored = doc["key"]
    return all(stored.get(k) == v for k, v in key.items() if not (k == "image" and v is None))
