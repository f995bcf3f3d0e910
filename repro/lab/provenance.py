"""Where and how a result was measured (design.md, chapter contract 4), from the side
of the Docker engine that ran the containers: with DOCKER_HOST on another machine,
that machine's CPUs, memory, kernel and storage, not the harness's."""
from __future__ import annotations

import re
import subprocess
from typing import Any

from ..results import ROOT
from ..text import Text
from . import engine
from .existing import this_machine
from .servers import Server

PASSWORD = re.compile(r"(password=)\S+")


def host(server: Server | None) -> dict[str, Any]:
    """The engine's machine: `docker info`, plus the CPU model and clock source read in a
    container of the run (/proc is the host's); with none (beside an existing server, whose
    pgbench runs in a helper on the engine's machine), read here when the engine is this
    machine's."""
    info = engine.info()
    if server is not None and server.image is not None:
        inside = _inside(server)
    else:
        inside = this_machine() if engine.is_local() else {}
    return {
        "cpu_model": inside.get("cpu_model"),
        "engine_cpus": info.get("NCPU"),
        "memory_gib": round(info.get("MemTotal", 0) / 1024**3, 1),
        "kernel": info.get("KernelVersion"),
        "os": info.get("OperatingSystem"),
        "storage_driver": info.get("Driver"),
        "docker_version": info.get("ServerVersion"),
        "docker_host": "local" if engine.is_local() else "remote (DOCKER_HOST)",
        "clocksource": inside.get("clocksource"),
    }


def _inside(server: Server) -> dict[str, str | None]:
    out = server.docker.exec_run(
        ["sh", "-c", "grep -m1 '^model name' /proc/cpuinfo; "
                     "cat /sys/devices/system/clocksource/clocksource0/current_clocksource"]
    ).output.decode(errors="replace").splitlines()
    model = next((line.split(":", 1)[1].strip() for line in out if line.startswith("model name")), None)
    clock = next((line.strip() for line in out if line and not line.startswith("model name")), None)
    return {"cpu_model": model, "clocksource": clock}


def server(s: Server) -> dict[str, Any]:
    """One server: its role, version(), image and what works in it, non-default settings
    (passwords redacted)."""
    return {
        "role": s.role.as_dict() if isinstance(s.role, Text) else s.role,
        "version": s.sql("SELECT version()")[0][0],
        "image": ({"name": s.image.name, "id": s.image.id, "origin": s.image.origin,
                   "recipe": s.image.recipe, "features": sorted(s.image.features)}
                  if s.image else None),
        "settings": {k: redacted(v) for k, v in s.setting_rows().items()},
        "absent_settings": list(s.absent),  # asked for, but not in this major: left out
        **({"session_settings": dict(s.session)} if s.session else {}),  # an existing server's
        **({"unapplied_settings": {k: list(v) for k, v in s.unapplied.items()}} if s.unapplied else {}),
    }


def redacted(text: str) -> str:
    """Connection strings (primary_conninfo, errors) carry a password; results are published."""
    return PASSWORD.sub(r"\1***", text)


def commit() -> dict[str, Any]:
    """The project's git commit and whether the tree had uncommitted changes."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return {"commit": git("rev-parse", "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}

