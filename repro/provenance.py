"""Where and how a result was measured (design.md, chapter contract 4)."""
from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

from . import engine
from .lab import Server


def _first(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def host() -> dict[str, Any]:
    """The machine the harness and its Docker engine run on (the engine's view when remote)."""
    info = engine.client().info()
    mem_kb = _first("/proc/meminfo", "MemTotal")
    try:
        clock = Path("/sys/devices/system/clocksource/clocksource0/current_clocksource").read_text().strip()
    except OSError:
        clock = None
    return {
        "cpu_model": _first("/proc/cpuinfo", "model name") or platform.processor(),
        "cpu_count": os.cpu_count(),
        "memory_gib": round(int(mem_kb.split()[0]) / 1024**2, 1) if mem_kb else None,
        "kernel": platform.release(),
        "clocksource": clock,
        "docker_version": engine.client().version().get("Version"),
        "docker_host": os.environ.get("DOCKER_HOST", "local socket"),
        "engine_cpus": info.get("NCPU"),
        "engine_memory_gib": round(info.get("MemTotal", 0) / 1024**3, 1),
    }


def server(s: Server, role: str) -> dict[str, Any]:
    """One server: version(), image, non-default settings."""
    return {
        "role": role,
        "version": s.sql("SELECT version()")[0][0],
        "image": {"name": s.image.name, "id": s.image.id, "origin": s.image.origin} if s.image else None,
        "settings": {k: _redacted(v) for k, v in s.setting_rows().items()},
    }


def _redacted(value: str) -> str:
    """Settings such as primary_conninfo carry a password; results are published."""
    return re.sub(r"(password=)\S+", r"\1***", value)
