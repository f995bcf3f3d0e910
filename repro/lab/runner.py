"""Run a chapter on one PostgreSQL major at one scale (or reuse its cached result) and
write its result document."""
from __future__ import annotations

import time
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from .. import majors, pooling, registry, results, scales
from ..chapter import Chapter, Run
from ..errors import ChapterStopped, ReproError
from ..stats import Rounds
from ..text import Text
from ..verdict import Environment
from ..verdict_words import verdict_dict
from . import engine, provenance
from .harness import images
from .harness.connections import use_of
from .harness.containers import host_config
from .harness.progress import Progress
from .context import RunContext
from .local_context import LocalRunContext
from .measure import decidable
from .runlock import engine_lock
from .existing import check_dsn, extensions, without_password
from .servers import Lab
from .existing import ExistingLab, host as client_host
from .local_client import LocalClient, client_for
from . import local as local_clusters
from .binaries import NoBinaries, binaries, host as this_host, usable_cpus


# What runs on local clusters (#71): every chapter of the project; a new one joins once it does
# (semaphores without its control, whose builds are images only).
LOCAL_CHAPTERS = ("auto_explain", "eic", "fdw", "fulltext", "parallel", "partitions", "replication",
                  "semaphores", "wait_events", "windows_linux")


def check_scale(chapter: Chapter, scale: str) -> dict[str, Any]:
    return chapter.scales[scales.check(scale)]


def target_of(dsn: str | None, server: str | None = None) -> str:
    """The target in the cache key: the DSN as given, which carries no password (see
    existing.check_dsn; stripped once more all the same); local clusters by this machine
    (its CPU model and count), so that their runs pool per machine."""
    if server == "local":
        machine = this_host()
        return f"local:{machine['cpu_model']} x{machine['engine_cpus']}"
    return "container" if dsn is None else "dsn:" + without_password(dsn)


def target_label(dsn: str | None, server: str | None = None) -> str:
    """Provenance's target: the run's containers, local clusters, or an existing server."""
    if server == "local":
        return "local"
    return "container" if dsn is None else "external server (DSN)"


def stored(path: Any, chapter: Chapter, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """A stored result, or None (with a warning) if the file is corrupt."""
    try:
        return results.load(path, chapter.name)
    except results.CorruptResult as exc:
        warn(f"ignoring a corrupt result file ({exc}); it will be replaced")
        return None


def quick(chapter: Chapter, params: dict[str, Any]) -> dict[str, Any]:
    """A scale's parameters for a quick run: one round and no more (what a chapter repeats by
    its own plan, such as windows_linux's fsync test, it still repeats), on the chapter's
    smaller data where it names one (Chapter.one_round: parallel's tiny needs SF 1 for Q10's
    plan flip, which no run of one round is judged on; at SF 0.1 every step runs on 14 and
    later, while on 9.6-13 the three Q10 runs are cut at 2 s in the warm-up, so the round
    times year_total alone)."""
    return {**params, **chapter.one_round, "rounds": 1, "max_rounds": 1}


def _keyed(chapter: Chapter, scale: str, major: float, lab_major: float, dsn: str | None,
           client: LocalClient | None = None, server: str | None = None,
           params: dict[str, Any] | None = None) -> tuple[images.Image, dict[str, Any], Path]:
    """The image a run uses (this machine's client programs or server binaries in its place),
    the key of its result (`params` other than the scale's are another experiment), and
    where the result goes."""
    if server == "local":
        found = binaries(major)
        image = found.image(found.client_programs()[1])
    else:
        image = client.image if client else images.resolve_image(lab_major)
    target = target_of(dsn, server)
    key = results.cache_key(chapter.experiment_hash(scale, target, params), scale, image.key, target)
    return image, key, results.path_for(chapter.name, major, scale, key["target"])


def _beside_found(previous: dict[str, Any] | None) -> bool:
    """Whether a stored local run went without a server beside it whose binaries this machine
    has now (`make binaries MAJORS=11` since): it runs again, and judges what it could not."""
    for name in ((previous or {}).get("raw") or {}).get("beside_missing", []):
        try:
            binaries(majors.parse(name))
            return True
        except NoBinaries:
            pass
    return False


def is_cached(chapter: Chapter, scale: str, major: float) -> bool:
    """Whether `run` would reuse a stored result rather than measure."""
    _, key, path = _keyed(chapter, scale, major, major, None)
    return results.is_fresh(stored(path, chapter, lambda line: None), key)


def expected_s(chapter: Chapter, scale: str) -> float:
    """How long a run of `chapter` at `scale` should take: the median of its five newest
    runs at that scale (any major, any version of the code), else its budget of rounds
    and a minute to set up."""
    durations = [d["provenance"]["duration_s"] for d in
                 sorted(results.everything(chapter.name), key=lambda d: d["provenance"]["started"])
                 if d["scale"] == scale and d["provenance"].get("duration_s")][-5:]
    if durations:
        return sorted(durations)[len(durations) // 2]
    return check_scale(chapter, scale).get("budget_s", 120) + 60


def declare_server_cpus(raw: dict[str, Any], cpus: int | None) -> None:
    """An experiment that compares with the server's CPU count records "engine_cpus", and
    None against an existing server, whose machine it cannot see; the count the user
    declares (--server-cpus) takes that None's place. Done here, not in the experiment, so
    declaring it does not change what the experiment measures (its key)."""
    if cpus is not None and "engine_cpus" in raw and raw["engine_cpus"] is None:
        raw["engine_cpus"] = cpus


def run(chapter: Chapter, scale: str = "default", major: float = majors.DEFAULT_MAJOR,
        dsn: str | None = None, force: bool = False,
        out: Callable[[str], None] = print, wait: bool = False,
        server_cpus: int | None = None, client: str | None = None,
        server: str | None = None, one_round: bool = False) -> tuple[dict[str, Any], bool]:
    """Return (result, reused): the cached result if its key matches, else a new run, made
    while holding the engine's run lock (`wait` waits for a run that holds it).
    `server_cpus`: an existing server's CPU count, as the user declares it; `client`: where
    pgbench and psql run beside it ("docker", "local", None: local if no engine answers);
    `server`: "local" starts the run's servers from this machine's binaries (lab/local.py);
    `one_round`: one round (`quick`), a check that the chapter runs: its parameters are in
    its key, so it never answers for, or pools with, the scale's runs."""
    params = check_scale(chapter, scale)
    if one_round:
        params = quick(chapter, params)
    if server not in (None, "container", "local"):
        raise ReproError(f"--server is container or local, not {server}")
    server = None if server == "container" else server
    if server and dsn:
        raise ReproError("--server local starts servers of the run's own; --dsn runs against an "
                         "existing server: give one of them")
    if server and chapter.name not in LOCAL_CHAPTERS:
        raise ReproError(f"{chapter.name} does not run on local clusters yet (--server local runs "
                         f"{', '.join(LOCAL_CHAPTERS)}); run it in containers or against an existing server")
    if server_cpus is not None and not dsn:
        raise ReproError("--server-cpus declares an existing server's CPU count (--dsn); a "
                         "container's is the Docker engine's own")
    if server_cpus is not None and server_cpus < 1:
        raise ReproError(f"--server-cpus must be a positive number of CPUs, not {server_cpus}")
    if client is not None and not dsn:
        raise ReproError("--client chooses where pgbench and psql run beside an existing server (--dsn)")
    local = None
    if dsn:
        major = check_dsn(dsn)
        local = client_for(client, major)
    lab_major = majors.DEFAULT_MAJOR if dsn else major  # with a DSN, the image only runs pgbench
    image, key, path = _keyed(chapter, scale, major, lab_major, dsn, local, server,
                              params if one_round else None)
    previous = stored(path, chapter, out)
    declared = (previous or {}).get("provenance", {}).get("server_cpus_declared")
    if not force and results.is_fresh(previous, key) and (not dsn or declared == server_cpus) \
            and not _beside_found(previous):
        return previous, True  # type: ignore[return-value]

    started = datetime.now(timezone.utc)
    doc: dict[str, Any] = {"chapter": chapter.name, "format": results.FORMAT, "key": key,
                           "major": major, "scale": scale, "scale_params": params}
    # an existing server's CPU count: declared or unknown; local clusters': this machine's
    cpus = server_cpus if dsn else len(usable_cpus()) if server else engine.info().get("NCPU")
    features = extensions(dsn) if dsn else image.features
    env = Environment(major, cpus, features, {}, external=dsn is not None, local=server == "local")
    unmet = [r.reason(env) for r in chapter.requires if not r.met(env)]
    if unmet:
        doc |= {"raw": {}, "unavailable": Text.join(unmet, "", " ").as_dict(),
            "provenance": {"started": started.isoformat(timespec="seconds"), "duration_s": 0,
                           "target": target_label(dsn, server), "servers": [],
                           "host": _host(server, local, None),
                           "features": sorted(features), "experiment": key["experiment"],
                           "git": provenance.commit()}}
        results.save(doc, path)
        return doc, False

    what = f"{chapter.name} on PostgreSQL {majors.name(major)}"
    lock = nullcontext() if local else engine_lock(what, wait, out, machine=server == "local")
    with lock:  # this machine's client programs beside an existing server use no engine
        started = datetime.now(timezone.utc)  # after any wait for the lock
        experiment = registry.experiment(chapter)
        progress = Progress(chapter.name)
        progress.note(f"PostgreSQL {majors.name(major)}, scale {scale}, image {image.name} "
                      f"({image.origin}, {image.id[7:19]})")
        t0 = time.monotonic()
        with (ExistingLab(lab_major, local) if dsn else local_clusters.LocalLab(major) if server
              else Lab(lab_major)) as lab:
            lab.image = image

            before = pooling.gather(chapter, major, scale, key["target"])  # this run's target's own

            def history(fid: str) -> list[tuple[Rounds, Environment]]:
                """The stored runs on the same target that count for a finding."""
                return [(r.rounds, r.environment) for r in before.counted(fid)]

            def decide(raw: dict[str, Any], extra: int) -> tuple[set[str], list[str]]:
                if dsn:  # the findings that need the declared CPU count are judged as at the end
                    raw = dict(raw)
                    declare_server_cpus(raw, server_cpus)
                current = (Rounds(raw, minimum=params["rounds"]),
                           Environment(major, cpus, features, raw, external=dsn is not None,
                                       local=server == "local"))
                return decidable(chapter.findings, current, history, extra)

            ctx = (LocalRunContext if server else RunContext)(chapter, params, lab, progress, dsn, decide, major)
            try:
                experiment.run(ctx)
            except Exception as exc:  # the Lab still removes every container on the way out
                why = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                if not isinstance(exc, ReproError):
                    why = f"{type(exc).__name__}: {why}".rstrip(": ")
                raise ChapterStopped(f"{chapter.name} on PostgreSQL {majors.name(major)} "
                                     f"stopped: {why}") from exc
            servers = [provenance.server(s) | ({"cluster": s.placement()} if server else
                                               {"container": host_config(s.docker)} if s.image else {})
                       | use_of(s, lab.redacted if server else provenance.redacted) for s in lab.servers]
            container = next((s for s in lab.servers if s.image is not None), None)
            host = _host(server, local, container)
            client_side = lab.provenance() if isinstance(lab, (ExistingLab, local_clusters.LocalLab)) else {}
        if dsn:
            declare_server_cpus(ctx.raw, server_cpus)
        doc |= {"raw": ctx.raw, "provenance": {
            "started": started.isoformat(timespec="seconds"),
            "duration_s": round(time.monotonic() - t0, 1),
            "target": target_label(dsn, server),
            "servers": servers, "host": host, "features": sorted(features),
            "experiment": key["experiment"], "git": provenance.commit()}}
        if dsn:
            doc["provenance"] |= {"server_cpus_declared": server_cpus}
        doc["provenance"] |= client_side
    doc["verdicts"] = [verdict_dict(v) for v in Run(chapter, doc).verdicts]  # as judged at run time
    results.save(doc, path)
    return doc, False


def _host(server: str | None, local: LocalClient | None, container: Any) -> dict[str, Any]:
    """The machine the run measured on: this one for local clusters or local clients, else the
    engine's."""
    if server == "local":
        return this_host()
    return client_host(local) if local else provenance.host(container)
