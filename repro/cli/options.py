"""What several commands share, declared once: the parser's one-line errors, the scale and
the majors (argparse checks them, so no command checks them by hand)."""
from __future__ import annotations

import argparse

from .. import majors, scales
from ..errors import ReproError

Commands = argparse._SubParsersAction  # what each command's parser function adds itself to
MAJOR_NAMES = tuple(majors.name(m) for m in majors.MAJORS)


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line naming the problem and exit 2 (`-h` shows the usage)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {self.prog}: {message} (-h shows the usage)\n")


def add_scale(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="default", choices=scales.SCALES, help="the scale (default: default)")


def _major_list(text: str) -> list[float]:
    """"13,17" as majors; a major we build no image for is argparse's one-line error."""
    try:
        found = majors.parse_list(text)
    except ReproError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if not found:
        raise argparse.ArgumentTypeError("takes one or more majors, comma-separated")
    return found


def add_majors(p: argparse.ArgumentParser, default: float | None = majors.DEFAULT_MAJOR,
               what: str = "PostgreSQL majors") -> None:
    """--pg "13,17": a list of majors (argparse converts the default too)."""
    shown = "" if default is None else f" (default {majors.name(default)})"
    p.add_argument("--pg", type=_major_list, default=None if default is None else majors.name(default),
                   metavar="MAJORS", help=f"{what}, comma-separated, each one of {', '.join(MAJOR_NAMES)}{shown}")
