"""The commands about the project's chapters themselves: list, register, new, readme, names."""
from __future__ import annotations

import argparse
import json
from typing import Any

from .. import majors, registry, results
from .options import Commands, add_majors


def add_list(sub: Commands) -> None:
    sub.add_parser("list", help="chapters and their results").set_defaults(fn=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    """Each chapter with its experiment key at the default scale, and its newest result per
    major and scale with its run time."""
    for name, chapter in registry.chapters().items():
        newest: dict[tuple, dict[str, Any]] = {}
        for doc in sorted(results.everything(name), key=lambda d: d["provenance"]["started"]):
            newest[(doc["major"], doc["scale"])] = doc
        found = [f"pg{majors.name(m)}-{s} {d['provenance']['duration_s']:.0f} s"
                 + ("" if d["key"]["experiment"] == chapter.experiment_hash(s, d["key"]["target"]) else " (stale)")
                 for (m, s), d in sorted(newest.items())]
        print(f"{name:16} {chapter.experiment_hash('default')}  {chapter.title.en}  "
              f"[{', '.join(found) or 'no result'}]")
    return 0


def add_register(sub: Commands) -> None:
    s = sub.add_parser("register", help="record revisions of a chapter's changed claims")
    s.add_argument("name")
    s.add_argument("--why", help="why the claims changed (required when some did)")
    s.add_argument("--why-ja", help="the same reason in Japanese, for the Japanese page")
    s.set_defaults(fn=cmd_register)


def cmd_register(args: argparse.Namespace) -> int:
    """Record a revision for each finding of the chapter whose claim, thresholds,
    requirements, kind or expected flag changed (repro/claims.py)."""
    from .. import claims
    chapter = registry.get(args.name)
    changed = claims.register(chapter, args.why or "", why_ja=args.why_ja)
    sized = claims.register_sizes(chapter, args.why or "")
    print(f"{chapter.name}: " + (f"registered {', '.join(changed)}" if changed else "the register is current")
          + (f"; the original's size of {', '.join(sized)}" if sized else ""))
    return 0


def add_new(sub: Commands) -> None:
    s = sub.add_parser("new", help="scaffold a new chapter (package, page, catalogue, test)")
    s.add_argument("name")
    s.set_defaults(fn=cmd_new)


def cmd_new(args: argparse.Namespace) -> int:
    from .. import scaffold
    for path in scaffold.create(args.name):
        print(f"created {path}")
    return 0


def add_readme(sub: Commands) -> None:
    sub.add_parser("readme", help="regenerate the README's chapter list").set_defaults(fn=cmd_readme)


def cmd_readme(args: argparse.Namespace) -> int:
    from ..readme import update_readme
    changed = update_readme(results.ROOT)
    print("README.md: chapter list updated" if changed else "README.md: chapter list is current")
    return 0


def add_names(sub: Commands) -> None:
    sub.add_parser("names", help="the chapters' names, as JSON").set_defaults(fn=cmd_names)


def cmd_names(args: argparse.Namespace) -> int:
    """The chapters' names as a JSON list (a CI matrix's axis)."""
    print(json.dumps(sorted(registry.chapters())))
    return 0



def add_images(sub: Commands) -> None:
    s = sub.add_parser("images", help="the images a run needs, as scripts/ensure-images.sh takes them")
    add_majors(s)
    s.add_argument("--only", metavar="CHAPTERS", help="these chapters, comma-separated (default: every one)")
    s.set_defaults(fn=cmd_images)


CONTROL = "repro-semaphores:"  # images/semaphores/ensure.sh makes them, on 15's image


def cmd_images(args: argparse.Namespace) -> int:
    """The majors whose images the chapters' runs on --pg use, their own and those beside
    them, and --control where one runs the semaphores control: what `make image` builds."""
    chosen = [registry.get(n) for n in args.only.split(",")] if args.only else registry.chapters().values()
    wanted = {majors.image(m) for m in args.pg}
    wanted.update(image for chapter in chosen for image in chapter.beside)
    control = any(image.startswith(CONTROL) for image in wanted)
    if control:
        wanted.add(majors.image(15))
    by_name = {majors.image(m): m for m in majors.MAJORS}
    needed = sorted(by_name[i] for i in wanted if i in by_name)
    print(" ".join(["--control"] * control + [majors.name(m) for m in needed]))
    return 0
