"""Give a stored run today's experiment key where the code it ran is, by today's rule, the
code of today (repro/fingerprint.py, repro/reach.py: the code the experiment reaches on its
target, each definition by name; its files; the scale's parameters). The rule is applied to
the tree of the commit the run records (provenance.git), extracted once per commit; the
keys found are cached per commit and rule under _build/migrate_keys/, so a second run reads
no tree again and is quick.

Which tree ran is known when the key the run first recorded (provenance.experiment, by the
rule of its day) is that of its commit's tree by the byte rule, or of today's tree (its code
then is today's, byte for byte), or when its commit was clean. Otherwise (uncommitted
changes that its key does not match) the code that ran is unknown and the file is left as
it is. A run whose commit's code is today's, by today's rule, gets today's key and keeps its
first key (`rekeyed_from`, and, as ever, provenance.experiment); any other run is left as it
is, out of its pool as its key is not today's. A run with today's key is left alone: run it
again whenever runs arrive or the code changes. This build's results (_build/results, the
cache of `make html`) are rekeyed alike.

A refactor that changes how the code reads and not what it does changes the keys all the
same, and so does a change that computes the same on every stored run (a check that no
stored reading trips). Where one was reviewed as such, BRIDGES names the commits before and
after it: a run whose code, by today's rule, is that of the commit before is a run of the
commit after, and keeps its place as long as that code is today's. A run of a tree with
uncommitted changes has no commit's code to compare, but a key by today's rule is its code's:
where it is the code's before a reviewed refactor, the run is carried alike.

    .venv/bin/python scripts/migrate_keys.py [--dry-run]
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repro import fingerprint, reach, results  # noqa: E402

Keys = dict[str, Any]  # old (the byte rule), new (today's rule), code and files (hashed), params
RULE = hashlib.sha256(b"".join(p.read_bytes() for p in (
    ROOT / "repro" / "fingerprint.py", ROOT / "repro" / "reach.py", Path(__file__)))).hexdigest()[:12]
# (before, after): #72 split the lab's mixed definitions into their treatment and harness
# halves, the same calls in the same order, and moved the harness to repro/lab/harness/,
# out of the key; the chapters import the engine's client and images from there.
# #71: fulltext asks the run's context which index kinds its servers have (ctx.has: in a
# container, the features of the lab's image, which the runner resolves as the experiment did).
# auto_explain stops with one line where pgbench -r reads one of F1's pairs at 0 ms (it
# stopped with a ZeroDivisionError): no stored F1 pair is -100 % (2,720) and none divided by
# 0, every stored latency is above 0 (the least 0.023 ms), so each stored run computes what it did.
# #71: fdw's foreign servers and user mappings come from each server's peer_conninfo, not from
# fdw.sql; in a container that is host 'ext1' or 'ext2', dbname 'bench', user 'postgres' and the
# run's password, as fdw.sql had them, so each stored run computes what it did.
# #71: how strace reaches a container's processes (the exec as root, its files, pkill) moved to
# the harness behind server.tracer(name), so that a local cluster's tracer can stand in; eic's and
# semaphores' containers get the same commands in the same order (eic's read of the trace gained
# 2>/dev/null, which changes nothing once strace has attached: -ff opens each file at attach).
# #71, the review of the last: the container tracer moved back into keyed lab code (tracing.py,
# ContainerServer.tracer), the same class and commands. servers.py imports tracing.py, so every
# chapter's key took in that module's body (its imports and STOP), which no other chapter runs:
# all ten chapters' runs carried. Local runs: the lab's own files moved out of the clusters' reach.
# #71: partitions' lab of 11 comes from ctx.beside, which in a container run enters Lab(11) on the
# run's stack as lab_for(stack, 11) did: the same lab, image and servers.
# #71: wait_events' CPU counters come from server.cpu_counters, which in a container runs the
# same `sh -c CPU_READING` as cpu_times did (the constant moved to servers.py).
# pgbench.parse raises one line (ReproError) where it raised ValueError: a run with no summary
# stopped either way, and every stored run had one, so each computes what it did (every chapter).
# auto_explain: a run of _mixed that read a query at 0 ms runs again (3 times in all) before it
# stops; F1's check of its pairs moved there. No stored reading of a mixed run is 0 (the least
# is 0.032 ms), and F1's single readings, which are not stored (only their medians and pairs),
# were checked already: a 0 stopped the run. So every stored run ran the same pgbench runs in
# the same order and computes what it did. That bridge also checked the warm-up's readings:
# the next one (_run_scripts) runs the warm-up once with no check, as every stored run did.
# parallel: tpcds.dataset takes a flock(2) around the cache's check and generation, so that runs
# side by side generate a scale factor once; a run alone checks, generates and loads as before.
# #71: semaphores' 9.6 comes from ctx.beside, which in a container enters Lab(9.6) on the run's
# stack as lab_for(stack, 9.6) did; its control starts where ctx.with_images, always in a
# container; semaphore_sets counts the sets whose marker (PGSemaMagic) the postmaster set, which
# in a container's own IPC namespace are all of them (a run of 2e02d7e on 17 counted 33, 33, 0
# and 0, as the stored runs do); it reads postmaster.pid and `ipcs -s -i` once per set before
# the warm-up, which measures nothing. Then (ff52d72) that loop goes on past a set the run's user
# may not read, and its output splits on whole "set ID" lines: in a container every set is the
# postmaster's and readable, and a run of ff52d72 on 17 counted 33, 33, 0 and 0 again.
# #71: partitions' 11 and semaphores' 9.6 come from `ctx.beside(...)`, which on local clusters
# gives None where the machine has no binaries of that major (the run goes on without it); in a
# container RunContext.beside always gives the lab, so the same servers start in the same order.
BRIDGES = [("1ed4e590118116b2f0e8632131e8715233d40412", "d2fa8c692bf66cd9c7b57bdcd2133a86da5616a8"),
           ("0c6f8f875cb48e1a743f0fec87751f2d552517ea", "f44d91454664df7a982bb5111d67d89563eb643c"),
           ("540d4e62bc176e6fa17452f29ade43ae5268c181", "6ad04256109e8056fe0c812a1bfa0bbbae658c18"),
           ("21591c1d5afc701068038c6d592e488bf47f1774", "57cf5ce8eb629e424a80bcc66cc8d21cf66be18a"),
           ("ccca269aad0bed6eac5db6ad32bb9a80804cb62a", "49fd8bbd9b26ac1b94247e8dee26d0b4e7732810"),
           ("6245d2ca94d3a01c1a27d5c7034f470f656c139d", "84270a16a5e4c9af314247edee4cd56eeb417233"),
           ("f004aa6f07fafcfceabc81020e308ca961465ab4", "9b5aa841e43024d4e5578100d9a1a0693c48f5b0"),
           ("5d4d97661acd488d611365da25476a37467a602e", "85d8667f15390a2794922fa3d69e893c8b08e122"),
           ("0a8894194c269acecfe756afc14ed1aafa4c2f4d", "5871ffbbe1d77492f523bb347cb084b866eba843"),
           ("fc4d3d79e7b4baf6a48391855fa91fafcf5fa939", "cae66a2144b44afe3ce285de6d47aad6c542d7ca"),
           ("cf14bd0fc60d8c3544e898239705dfc45a5451be", "7c0078d1a1b705e1b24743ff335f1fa5b273ee0d"),
           ("8c9ea79691228e28b912480d49d65193876d959b", "2d9159f880c8d79dacdff567417c2007b31b14c1"),
           ("7dccc9ca2c475cc792f56f1bc6cc87c1478bcaba", "2e02d7e756c7c135266e2f2f489578464a01ddb1"),
           ("2e02d7e756c7c135266e2f2f489578464a01ddb1", "ff52d723075dbbee6e074f1ad6bef3bd753e6e4a"),
           ("baeed8678e6b663c104a2d8b60e4a1a7c7cd4c11", "0e7e7c8293a15876bef1f99fbc0077b06589567a")]


def bytes_key(package: Path, params: dict[str, Any] | None) -> str:
    """The byte rule (results.experiment_hash until #58): the bytes of the experiment, its
    files and every module it imports within the lab and its chapter, by path in its tree,
    and the scale's parameters."""
    tree = package.parents[2]
    paths = sorted({*reach.closure(package / "experiment.py"),
                    *(p for p in (package / "files").rglob("*") if p.is_file())})
    inner = hashlib.sha256()
    for path in paths:
        inner.update(path.relative_to(tree).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest = hashlib.sha256(inner.hexdigest()[:16].encode())
    digest.update(json.dumps(params, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def _short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def keys_in(tree: Path, chapter: str, scale: str, target: str) -> Keys | None:
    package = tree / "repro" / "chapters" / chapter
    if not (package / "experiment.py").is_file():
        return None
    params = tomllib.loads((package / "scales.toml").read_text(encoding="utf-8")).get(scale)
    code = fingerprint.reached(package / "experiment.py", target != "container")
    return {"old": bytes_key(package, params), "new": fingerprint.experiment(package, params, target),
            "code": {name: _short(text.encode()) for name, text in code.items()},
            "files": {p.relative_to(package).as_posix(): _short(p.read_bytes())
                      for p in sorted((package / "files").rglob("*")) if p.is_file()},
            "params": params}


def kind_of(target: str) -> str:
    """container, dsn or local: a key reaches and hashes the same code on every existing
    server, and on every machine's local clusters (fingerprint.experiment)."""
    return target.split(":", 1)[0]


class Trees:
    """Each commit's keys, from the cache (_build/migrate_keys/RULE/COMMIT.json) or from its
    repro/ extracted once (git archive) under a temporary folder; today's from this tree."""

    def __init__(self, base: Path, cache_dir: Path | None = None):
        self.base = base
        self.cache_dir = cache_dir or ROOT / "_build" / "migrate_keys" / RULE
        self.found: dict[str, dict[str, Keys | None]] = {}

    @cache
    def tree(self, commit: str) -> Path | None:
        out = subprocess.run(["git", "archive", "--format=tar", commit, "repro"], cwd=ROOT, capture_output=True)
        if out.returncode:
            return None
        with tarfile.open(fileobj=BytesIO(out.stdout)) as tar:
            tar.extractall(self.base / commit, filter="data")
        return self.base / commit

    @cache
    def today(self, chapter: str, scale: str, target: str) -> Keys:
        found = keys_in(ROOT, chapter, scale, target)
        assert found is not None, chapter
        return found

    def keys(self, commit: str, chapter: str, scale: str, target: str) -> Keys | None:
        path = self.cache_dir / f"{commit}.json"
        if commit not in self.found:
            self.found[commit] = json.loads(path.read_text()) if path.is_file() else {}
        known = self.found[commit]
        what = f"{chapter}/{scale}/{kind_of(target)}"
        if what not in known:
            tree = self.tree(commit)
            known[what] = None if tree is None else keys_in(tree, chapter, scale, target)
            results.write_atomically(path, json.dumps(known, sort_keys=True))
        return known[what]

    def carried(self, keys: Keys, chapter: str, scale: str, target: str) -> Keys:
        """The keys of code carried across the reviewed refactors (BRIDGES), in order: those
        of the commit after each whose commit before has this code."""
        for before, after in BRIDGES:
            then, now = self.keys(before, chapter, scale, target), self.keys(after, chapter, scale, target)
            if then is not None and now is not None and keys["new"] == then["new"]:
                keys = now
        return keys

    def bridged(self, key: str, chapter: str, scale: str, target: str) -> str:
        """A key by today's rule carried across the reviewed refactors (BRIDGES), in order."""
        return self.carried({"new": key}, chapter, scale, target)["new"]


def differences(then: Keys, now: Keys) -> str:
    """What runs differently, in a few words (definitions, files, parameters)."""
    names = sorted(n for n in then["code"].keys() | now["code"].keys() if then["code"].get(n) != now["code"].get(n))
    names += sorted(f"files/{n}" for n in then["files"].keys() | now["files"].keys()
                    if then["files"].get(n) != now["files"].get(n))
    names += ["the scale's parameters"] if then["params"] != now["params"] else []
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def rekey(path: Path, doc: dict[str, Any], trees: Trees, write: bool) -> tuple[bool, str]:
    """(whether the run has today's key, why), the file rewritten where it gets it."""
    key = doc["key"]
    now = trees.today(doc["chapter"], doc["scale"], key["target"])
    if key["experiment"] == now["new"]:
        return True, "kept: its key is today's already"
    first = key.get("rekeyed_from") or doc["provenance"].get("experiment") or key["experiment"]
    git = doc["provenance"].get("git") or {}
    then = trees.keys(git["commit"], doc["chapter"], doc["scale"], key["target"]) if git.get("commit") else None
    if trees.bridged(key["experiment"], doc["chapter"], doc["scale"], key["target"]) == now["new"]:
        # a key by today's rule is its code's, whatever its tree: that of a commit before a
        # reviewed refactor (a run of a dirty tree, whose key was today's until the refactor)
        how, new = "its key was today's before a reviewed refactor", now["new"]
    elif first == now["old"]:
        how = "its code was today's, byte for byte"
        new = now["new"]
    elif then is not None and doc.get("scale_params") not in (None, then["params"]):
        # a run of one round (repro run --one-round), or of an uncommitted scales.toml: its key is
        # its own parameters', never the scale's
        return False, "left out: it ran other parameters than its scale's in its commit"
    elif then is not None and (first == then["old"] or git.get("dirty") is False):
        how = "its key is its commit's" if first == then["old"] else "its commit was clean"
        new = then["new"]
    elif git.get("dirty") is not False:
        return False, "left out: its tree had uncommitted changes that its key does not match"
    else:
        return False, "left out: its commit, or its chapter there, is not in this repository"
    if (across := trees.bridged(new, doc["chapter"], doc["scale"], key["target"])) != new:
        how, new = f"{how}; its code is that before a reviewed refactor", across
    if new != now["new"]:
        assert then is not None
        ran = trees.carried(then, doc["chapter"], doc["scale"], key["target"])
        across = ", across a reviewed refactor," if ran is not then else ""
        return False, f"left out, its code{across} differs in what runs: {differences(ran, now)}"
    if write:
        doc["key"] = {**key, "experiment": new, "rekeyed_from": first}
        results.write_atomically(path, json.dumps(doc, ensure_ascii=False, indent=1))
    return True, f"kept: {how}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true", help="count, write nothing")
    args = p.parse_args()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    with tempfile.TemporaryDirectory() as tmp:
        trees = Trees(Path(tmp))
        for path in sorted(results.history().rglob("pg*.json")):
            try:
                doc = results.load(path)
            except results.CorruptResult as exc:
                print(f"skipped, not a result document: {exc}")
                continue
            counts[doc["chapter"]][rekey(path, doc, trees, not args.dry_run)[1]] += 1
        cached = [rekey(path, doc, trees, not args.dry_run)[0] for path, doc in build_results()]
    report(counts)
    print(f"this build's results ({results.build_dir()}): {sum(cached)} with today's key, "
          f"{len(cached) - sum(cached)} left as they were")
    return 0


def build_results() -> list[tuple[Path, dict[str, Any]]]:
    """This build's results (the cache of `make html`), rekeyed alike so that a build does
    not measure again what it has."""
    found = []
    for path in sorted(results.build_dir().glob("*/pg*.json")):
        try:
            found.append((path, results.load(path)))
        except results.CorruptResult:
            continue
    return found


def report(counts: dict[str, collections.Counter]) -> None:
    total: collections.Counter = collections.Counter()
    for chapter in sorted(counts):
        kept = sum(n for why, n in counts[chapter].items() if why.startswith("kept"))
        print(f"{chapter}: {kept} kept, {sum(counts[chapter].values()) - kept} left out")
        for why, n in sorted(counts[chapter].items()):
            print(f"  {n:4}  {why}")
            total["kept" if why.startswith("kept") else why.split(": ")[-1] if why.startswith("left out:")
                  else "its code differs in what runs"] += n
    left = {why: n for why, n in total.items() if why != "kept"}
    print(f"all: {total['kept']} kept, {sum(left.values())} left out "
          f"({'; '.join(f'{n}: {why}' for why, n in sorted(left.items()))})")


if __name__ == "__main__":
    sys.exit(main())
