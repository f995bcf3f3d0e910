"""Fail if the English catalogue lacks, leaves untranslated or marks fuzzy any message
of the Japanese sources (so the English site never silently shows Japanese text)."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "locale" / "en" / "LC_MESSAGES"


def problems_in(pot_dir: Path) -> list[str]:
    problems = []
    for pot in sorted(pot_dir.rglob("*.pot")):
        rel = pot.relative_to(pot_dir).with_suffix(".po")
        po_path = CATALOGUE / rel
        if not po_path.exists():
            problems.append(f"{po_path.relative_to(ROOT)}: missing (run `make intl`, then translate)")
            continue
        with po_path.open("rb") as f:
            po = read_po(f)
        with pot.open("rb") as f:
            for msg in read_po(f):
                if not msg.id:
                    continue
                found = po.get(msg.id, msg.context)
                if found is None or not found.string:
                    problems.append(f"{rel}: untranslated: {str(msg.id)[:70]!r}")
                elif found.fuzzy:
                    problems.append(f"{rel}: fuzzy: {str(msg.id)[:70]!r}")
    return problems


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "sphinx", "-c", str(ROOT), "-q", "-b", "gettext",
                        str(ROOT / "docs"), tmp], check=True)
        problems = problems_in(Path(tmp))
    for line in problems:
        print(f"check-po: {line}", file=sys.stderr)
    if problems:
        print(f"check-po: {len(problems)} problem(s); run `make intl` and translate "
              f"locale/en/LC_MESSAGES", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
