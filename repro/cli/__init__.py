"""python -m repro list | run NAME | check NAME | matrix | compare NAME | canary | noise | build | archive | register NAME | new NAME | readme | images | clean"""
from __future__ import annotations

import argparse
import signal
import sys

from ..errors import ReproError
from . import judging, project, running
from .options import Parser

# each command's parser function, in the order `-h` lists them; each sits beside its command
COMMANDS = (project.add_list, running.add_run, judging.add_check, running.add_build, running.add_archive,
            judging.add_matrix, judging.add_compare, judging.add_canary, judging.add_noise, project.add_register,
            project.add_new, project.add_readme, project.add_names, project.add_images, running.add_clean)


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m repro", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C must clean up even when started in the background, where SIGINT is ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except ReproError as exc:
        print(f"{exc.detail()}error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; every container of this run was removed", file=sys.stderr)
        return 130
