"""{{name}}: what is particular to this chapter (the contract's checks run for every chapter
in test_chapters.py)."""
from conftest import chapter_result

from repro.chapters.{{name}}.conditions import CONDITIONS


def test_both_conditions_measured_every_round() -> None:
    doc, _ = chapter_result("{{name}}")
    rounds = doc["raw"]["rounds"]
    assert set(rounds) == set(CONDITIONS)
    assert all(len(v) >= doc["scale_params"]["rounds"] for v in rounds.values())
