"""The PostgreSQL majors the report runs on: the list, the default, and how a major is
read and written ("9.6", "17"). Lab-free: the CLI, the lab and the site share it."""
from __future__ import annotations

from .errors import ReproError

MAJORS = (9.6, 10, 11, 12, 13, 14, 15, 16, 17, 18)  # what images/build.sh can make
DEFAULT_MAJOR = 17  # what a chapter runs on unless told, and what each page shows


def name(major: float) -> str:
    return "9.6" if major == 9.6 else str(int(major))


def image(major: float) -> str:
    """The project's image of a major (images/ensure.sh makes it)."""
    return f"repro-postgres:{name(major)}"


def parse(text: str) -> float:
    """"9.6" or "17"; anything else is a clear error."""
    try:
        major = 9.6 if text.strip() == "9.6" else int(text)
    except ValueError:
        major = None
    if major not in MAJORS:
        raise ReproError(f"PostgreSQL {text.strip()} is not one of the majors we build images for "
                         f"({', '.join(map(name, MAJORS))})")
    return major


def parse_list(text: str) -> list[float]:
    """"13,17" as majors."""
    return [parse(part) for part in text.split(",") if part.strip()]
