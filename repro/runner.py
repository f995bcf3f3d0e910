"""Run a chapter (or reuse its cached result) and write its result document."""
from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from . import engine, provenance, results
from .chapter import SCALES, Chapter, RunContext
from .errors import ReproError
from .lab import Lab, check_dsn
from .measure import Progress

PACKAGE = Path(__file__).resolve().parent


def module_hash(chapter: Chapter) -> str:
    return results.source_hash([chapter.source])


def code_hash() -> str:
    """Content hash of the whole repro package, recorded in provenance."""
    return results.source_hash(sorted(PACKAGE.rglob("*.py")))


def check_scale(chapter: Chapter, scale: str) -> dict[str, Any]:
    if scale not in SCALES:
        raise ReproError(f"unknown scale {scale!r}; scales: {', '.join(SCALES)}")
    return chapter.scales[scale]


def target_of(dsn: str | None) -> str:
    """The target in the cache key; a DSN is hashed so no password lands in a file."""
    return "container" if dsn is None else "dsn:" + hashlib.sha256(dsn.encode()).hexdigest()[:12]


def stored(chapter: Chapter, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """The chapter's stored result, or None (with a warning) if it is corrupt."""
    try:
        return results.load(chapter.name)
    except results.CorruptResult as exc:
        warn(f"ignoring a corrupt result file ({exc}); it will be replaced")
        return None


def run(chapter: Chapter, scale: str = "default", major: int = engine.DEFAULT_MAJOR,
        dsn: str | None = None, force: bool = False,
        out: Callable[[str], None] = print) -> tuple[dict[str, Any], bool]:
    """Return (result, reused): the cached result if its key matches, else a new run."""
    params = check_scale(chapter, scale)
    if dsn:
        check_dsn(dsn)
    if dsn and not chapter.supports_dsn:
        raise ReproError(f"chapter {chapter.name} cannot run against a DSN: it restarts servers")
    image = engine.resolve_image(major)
    key = results.cache_key(module_hash(chapter), scale, image.id, target_of(dsn))
    previous = stored(chapter, out)
    if not force and results.is_fresh(previous, key):
        return previous, True  # type: ignore[return-value]

    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    progress = Progress(chapter.name, chapter.steps(params))
    progress.note(f"scale {scale}, image {image.name} ({image.origin}, {image.id[7:19]})")
    with Lab(major) as lab:
        lab.image = image
        ctx = RunContext(scale, params, lab, progress, dsn)
        data = chapter.run(ctx)
        servers = [provenance.server(s, role) for role, s in ctx.servers]
    duration = time.monotonic() - t0
    doc = {
        "chapter": chapter.name,
        "format": results.FORMAT,
        "key": key,
        "scale": scale,
        "scale_params": params,
        "raw": data["raw"],
        "summary": data["summary"],
        "findings": chapter.evaluate(data["summary"]),
        "provenance": {
            "started": started.isoformat(timespec="seconds"),
            "duration_s": round(duration, 1),
            "target": "container" if dsn is None else "external server (DSN)",
            "major": major,
            "servers": servers,
            "host": provenance.host(),
            "module_hash": key["module"],
            "code_hash": code_hash(),
        },
    }
    results.save(doc)
    return doc, False
