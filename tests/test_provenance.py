"""Every result records the provenance design.md lists; corrupt files are re-run, not crashed on."""
from repro import provenance

KEYS = {"started", "duration_s", "target", "major", "servers", "host", "module_hash", "code_hash"}
HOST = {"cpu_model", "cpu_count", "memory_gib", "kernel", "clocksource", "docker_version"}


def test_provenance_is_complete(tiny_results) -> None:
    for doc, _ in tiny_results.values():
        prov = doc["provenance"]
        assert KEYS <= set(prov) and HOST <= set(prov["host"])
        assert all(prov["host"][k] not in (None, "") for k in HOST - {"clocksource"})
        assert doc["scale_params"] and doc["key"]["scale"] == "tiny"
        for server in prov["servers"]:
            assert server["version"].startswith("PostgreSQL ")
            assert server["image"]["id"].startswith("sha256:") and server["image"]["name"]
            assert server["settings"]


def test_corrupt_result_was_reported_and_replaced(tiny_results) -> None:
    for _, lines in tiny_results.values():
        assert any("ignoring a corrupt result file" in line for line in lines)


def test_no_password_in_published_settings(tiny_results) -> None:
    # the replication standbys' primary_conninfo carries one; results are published
    for doc, _ in tiny_results.values():
        for server in doc["provenance"]["servers"]:
            assert not [v for v in server["settings"].values() if "password=repro" in v]
    assert provenance._redacted("host=p password=secret user=x") == "host=p password=*** user=x"
