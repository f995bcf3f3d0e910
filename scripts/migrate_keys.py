"""Give every stored run the experiment key of the code it ran, by today's rule
(repro/fingerprint.py: the code the experiment reaches, its files, the scale's parameters),
worked out on the tree of the commit the run records (provenance.git), extracted once per
commit. A run keeps its place in its pool where that key is today's; a run whose code
differed in what runs stays out, as it did.

Which tree ran is known when the key the run recorded (the old rule: the bytes of every
module the experiment imports) is that of its commit's tree, or of today's tree (its code
then is today's, byte for byte), or when its commit was clean. Otherwise (uncommitted changes
that its key does not match) the code that ran is unknown: the file is left as it is, and its
old key matches no key of today's rule. A rekeyed file keeps its old key as `rekeyed_from`
(and, as before, in its provenance); a file already rekeyed, or written under today's rule,
is left alone, so the script can run again after more runs arrive. This build's results
(_build/results, the cache of `make html`) are rekeyed alike.

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
from dataclasses import dataclass
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repro import fingerprint, results  # noqa: E402


def bytes_key(package: Path, params: dict[str, Any] | None) -> str:
    """The old rule (results.experiment_hash until this script): the bytes of the experiment,
    its files and every module it imports within the lab and its chapter, by path in its
    tree, and the scale's parameters."""
    tree = package.parents[2]
    paths = sorted({*fingerprint.closure(package / "experiment.py"),
                    *(p for p in (package / "files").rglob("*") if p.is_file())})
    inner = hashlib.sha256()
    for path in paths:
        inner.update(path.relative_to(tree).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest = hashlib.sha256(inner.hexdigest()[:16].encode())
    digest.update(json.dumps(params, sort_keys=True).encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Keys:
    """A chapter at a scale in one tree: the old rule's key, today's rule's, and what runs."""

    old: str
    new: str
    code: dict[str, str]
    files: dict[str, bytes]
    params: Any


def keys_in(tree: Path, chapter: str, scale: str) -> Keys | None:
    package = tree / "repro" / "chapters" / chapter
    if not (package / "experiment.py").is_file():
        return None
    params = tomllib.loads((package / "scales.toml").read_text(encoding="utf-8")).get(scale)
    files = {p.relative_to(package).as_posix(): p.read_bytes()
             for p in sorted((package / "files").rglob("*")) if p.is_file()}
    return Keys(bytes_key(package, params), fingerprint.experiment(package, params),
                fingerprint.reached(package / "experiment.py"), files, params)


class Trees:
    """Each commit's repro/ extracted once (git archive), under one temporary folder."""

    def __init__(self, base: Path):
        self.base = base

    @cache
    def tree(self, commit: str) -> Path | None:
        out = subprocess.run(["git", "archive", "--format=tar", commit, "repro"], cwd=ROOT,
                             capture_output=True)
        if out.returncode:
            return None
        with tarfile.open(fileobj=BytesIO(out.stdout)) as tar:
            tar.extractall(self.base / commit, filter="data")
        return self.base / commit

    @cache
    def keys(self, commit: str | None, chapter: str, scale: str) -> Keys | None:
        tree = ROOT if commit is None else self.tree(commit)
        return None if tree is None else keys_in(tree, chapter, scale)


def differences(then: Keys, now: Keys) -> str:
    """What runs differently, in a few words: definitions, files, parameters."""
    names = sorted(n for n in then.code.keys() | now.code.keys() if then.code.get(n) != now.code.get(n))
    names += sorted(f"files/{n}" for n in then.files.keys() | now.files.keys()
                    if then.files.get(n) != now.files.get(n))
    names += ["the scale's parameters"] if then.params != now.params else []
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def decide(doc: dict[str, Any], trees: Trees) -> tuple[str | None, str]:
    """(the run's key by today's rule or None if unknown, how it is known)."""
    git = doc["provenance"].get("git") or {}
    recorded = doc["key"]["experiment"]
    then = trees.keys(git.get("commit"), doc["chapter"], doc["scale"]) if git.get("commit") else None
    now = trees.keys(None, doc["chapter"], doc["scale"])
    if then is not None and recorded == then.old:
        return then.new, "its key is its commit's"
    if recorded == now.old:
        return now.new, "its code is today's, byte for byte"
    if then is not None and git.get("dirty") is False:
        return then.new, "its commit was clean"
    return None, "its tree had uncommitted changes that its key does not match"


def pool_of(path: Path, doc: dict[str, Any]) -> tuple:
    """Which pool a run would join: chapter, machine folder, major, scale, target."""
    folder = path.parent.name if path.parent.name != doc["chapter"] else ""
    return doc["chapter"], folder, doc["major"], doc["scale"], doc["key"]["target"]


def rekey(path: Path, doc: dict[str, Any], trees: Trees, write: bool) -> tuple[str | None, str, bool]:
    """(the run's key by today's rule or None if unknown, how it is known, whether it pooled
    under the old rule), the file rewritten with its new key where that is known."""
    now = trees.keys(None, doc["chapter"], doc["scale"])
    commit = (doc["provenance"].get("git") or {}).get("commit")
    then = trees.keys(commit, doc["chapter"], doc["scale"]) if commit else None
    recorded = doc["key"]["experiment"]
    if "rekeyed_from" in doc["key"] or (then is not None and recorded == then.new):
        return recorded, "already by today's rule", doc["key"].get("rekeyed_from") == now.old
    new, how = decide(doc, trees)
    if new is not None and write:
        doc["key"] = {**doc["key"], "experiment": new, "rekeyed_from": recorded}
        results.write_atomically(path, json.dumps(doc, ensure_ascii=False, indent=1))
    return new, how, recorded == now.old


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true", help="count, write nothing")
    args = p.parse_args()
    before: collections.Counter = collections.Counter()
    after: collections.Counter = collections.Counter()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    known: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        trees = Trees(Path(tmp))
        for path in sorted(results.history().rglob("pg*.json")):
            try:
                doc = results.load(path)
            except results.CorruptResult as exc:
                print(f"skipped, not a result document: {exc}")
                continue
            new, how, pooled_before = rekey(path, doc, trees, not args.dry_run)
            now = trees.keys(None, doc["chapter"], doc["scale"])
            kept = new == now.new
            known[how] += 1
            before[pool_of(path, doc)] += pooled_before
            after[pool_of(path, doc)] += kept
            counts[doc["chapter"]][why(doc, trees, how, kept, pooled_before, new is None)] += 1
            if pooled_before and not kept:
                print(f"SHRINKS: {path.relative_to(ROOT)} pooled before, not now ({how})")
        cached = [rekey(path, doc, trees, not args.dry_run)[0] for path, doc in build_results()]
    report(counts, before, after)
    print("how each run's code is known:", "; ".join(f"{n} {how}" for how, n in known.most_common()))
    print(f"this build's results ({results.build_dir()}): {sum(k is not None for k in cached)} rekeyed, "
          f"{sum(k is None for k in cached)} left as they were")
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


def why(doc: dict[str, Any], trees: Trees, how: str, kept: bool, pooled_before: bool, unknown: bool) -> str:
    """Why a run is kept or left out, in a line."""
    if kept:
        return "kept, " + ("pooled before too" if pooled_before else "newly: only what does not run differed")
    if unknown:
        return f"left out: {how}"
    commit = (doc["provenance"].get("git") or {}).get("commit")
    then = trees.keys(commit, doc["chapter"], doc["scale"]) if commit else None
    if then is None:
        return "left out, its code differs in what runs (its commit is not in this repository)"
    return f"left out, its code differs in what runs: {differences(then, trees.keys(None, doc['chapter'], doc['scale']))}"


def report(counts: dict[str, collections.Counter], before: collections.Counter,
           after: collections.Counter) -> None:
    total = collections.Counter()
    for chapter in sorted(counts):
        kept = sum(n for why, n in counts[chapter].items() if why.startswith("kept"))
        print(f"{chapter}: {kept} kept, {sum(counts[chapter].values()) - kept} left out")
        for why, n in sorted(counts[chapter].items()):
            print(f"  {n:4}  {why}")
            total["kept" if why.startswith("kept") else "left out"] += n
    print(f"all: {total['kept']} kept, {total['left out']} left out")
    for pool in sorted(before.keys() | after.keys(), key=str):
        if before[pool] != after[pool]:
            print(f"pool {pool}: {before[pool]} runs before, {after[pool]} now")


if __name__ == "__main__":
    sys.exit(main())
