"""partitions: what is particular to this chapter (the contract's checks run for every
chapter in test_chapters.py)."""
import pytest
from conftest import chapter_result

from repro.chapters.partitions.conditions import REFERENCE, THIS


def test_both_servers_measured_every_round_and_the_locks_counted() -> None:
    doc, _ = chapter_result("partitions")
    if "unavailable" in doc:
        pytest.skip("no hash partitioning before 11")
    rounds = doc["raw"]["rounds"]
    servers = {THIS} if doc["major"] == 11 else {THIS, REFERENCE}
    assert set(rounds) == servers
    assert all(len(v) >= doc["scale_params"]["rounds"] for v in rounds.values())
    locked = doc["raw"]["locked"]
    assert set(locked) == servers and all(1 <= n <= doc["scale_params"]["partitions"] for n in locked.values())
