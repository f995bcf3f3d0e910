"""Container start-to-ready time (budget: under 2 s), median of N starts per major.

    .venv/bin/python benchmarks/start_to_ready.py [N] [MAJOR ...]
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repro.lab.servers import Lab  # noqa: E402
from repro.majors import parse  # noqa: E402


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 10
    majors = [parse(m) for m in argv[1:]] or [17]
    for major in majors:
        times = []
        with Lab(major) as lab:
            lab._image()  # resolve the image first: the budget is for the container
            for _ in range(n):
                t0 = time.monotonic()
                server = lab.server("start")
                server.sql("SELECT 1")
                times.append(time.monotonic() - t0)
                lab.close()
        print(f"PostgreSQL {major}: median {statistics.median(times):.2f} s over {n} starts "
              f"(min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main(sys.argv[1:])
