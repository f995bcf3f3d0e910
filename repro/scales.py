"""The scales a chapter runs at, and their check (lab-free: the CLI and the lab share it)."""
from __future__ import annotations

from .errors import ReproError

SCALES = ("tiny", "default", "full")  # tests, a laptop in about two minutes, the original's


def check(scale: str) -> str:
    if scale not in SCALES:
        raise ReproError(f"unknown scale {scale!r}; scales: {', '.join(SCALES)}")
    return scale
