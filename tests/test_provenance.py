"""Every result records the provenance design.md lists, from the engine's side; no password
reaches a result file; a corrupt result file is reported and replaced, not crashed on."""
import re

from conftest import chapter_result

from repro import registry, results
from repro.lab import provenance, runner

KEYS = {"started", "duration_s", "target", "servers", "host", "features", "experiment", "git"}
HOST = {"cpu_model", "engine_cpus", "memory_gib", "kernel", "os", "storage_driver",
        "docker_version", "docker_host", "clocksource"}
PASSWORD = re.compile(r"password=(?!\*\*\*)\S+")


def test_provenance_is_complete() -> None:
    for name in registry.chapters():
        doc, _ = chapter_result(name)
        prov = doc["provenance"]
        assert KEYS <= set(prov) and HOST <= set(prov["host"])
        assert all(prov["host"][k] not in (None, "") for k in HOST - {"clocksource"})
        assert prov["git"]["commit"] and doc["scale_params"] and doc["key"]["scale"] == doc["scale"]
        for server in prov["servers"]:
            assert server["version"].startswith("PostgreSQL ") and server["role"]
            assert server["image"]["id"].startswith("sha256:") and server["image"]["name"]
            assert server["settings"]


def test_no_password_in_result_files() -> None:
    # the replication standbys' primary_conninfo carries one; results are published
    for name in registry.chapters():
        chapter_result(name)
        for path in results.build_dir().glob(f"{name}/*.json"):
            assert not PASSWORD.search(path.read_text()), path
    assert provenance.redacted("host=p password=secret user=x") == "host=p password=*** user=x"


def test_a_corrupt_result_is_reported_and_replaced(tmp_path) -> None:
    path = tmp_path / "pg17-tiny.json"
    path.write_text("{ not json", encoding="utf-8")
    warnings: list[str] = []
    assert runner.stored(path, registry.get("auto_explain"), warnings.append) is None
    assert warnings and "ignoring a corrupt result file" in warnings[0]
