"""Reconstruct, from the project's git history, every change of mind on the claims that the
register (repro/chapters/NAME/registered.json, begun 2026-11-25 02:42 UTC) does not record.

What it reconstructs, per finding of every chapter in the register:
- its first appearance in the code ("declared"), when that predates its "registered" entry;
- every later change of its expected flag, a threshold or check (the checks' thresholds and
  count), a requirement, or how its measure is computed (the measure fingerprint of
  repro/fingerprint.py, computed with today's algorithm on the old code), made after runs of
  the chapter and before the register began, or in the commit that began it (hidden inside
  the "registered" entry; dated as that entry);
- for each such entry, and for every entry already in the register, `after`: the runs seen
  before it, and where they were stored, `contradicted`: how many of them had judged the
  finding contradicted, by their own verdicts (read from the history where a file was removed
  since, so that the site need not read git to say it).
Changes after the register began are the register's; those it lacks (measures changed before
it kept fingerprints, on 2026-11-26) are written in too, dated at their commit: the runs
before them no longer count (one run of replication on 17, 2026-11-25 03:02, in the history
of 2026-11-27).

How:
- Declarations: every commit that touched repro/ is read. From 2026-11-23 06:18 (chapters as
  packages) the commit's own code is imported in a subprocess (a `git archive` of it in a
  scratch folder) and each finding rendered as the register renders it; before that, the
  chapter modules are parsed (ast): id, claim, expected flag, and the comparisons with a
  number in the finding's check function (with the module constants they name) as its
  "holds_if". Snapshots are cached per commit in _build/audit_revisions/ (the commit fixes
  their content; the first run takes about 10 minutes, later ones seconds).
- Identity: by id. The claims are compared from commit to commit too: a claim rewritten out
  of recognition, or an id that disappears, is named in the report (a renumbering would show
  there; none did).
- Runs: every result file ever added under results/NAME/ (start time in its name). A run
  precedes a change when it was committed before the change's commit or started before it.
  Each stored result keeps its own verdicts, with the expected flag and thresholds it was
  judged with: a run judged otherwise than the next commit's code, and otherwise than the
  code before, shows a change made in the working tree after it ("runs" in the report). A
  run that already carries a declared flag shows the flag was set before it started: a
  declaration's `after` stops at the first such run.
- Runs made but not stored: a paragraph of the commit's message, of the chapter's page (its
  English) or a comment in the finding's declaration at that commit that names the finding
  and runs ("in 9 of 10 tiny runs", "repeated default-scale runs"); a message paragraph that
  names no finding but says thresholds came from runs counts for every threshold it changed.
  `after` then says "runs not stored, as commit X says" (or the page, or the code comment).
- Contradictions: a run contradicted a finding when its own verdict of it says so.

Usage: python scripts/audit_revisions.py [--write]. Without --write it prints a report and
the entries it would add; with --write it adds them and the missing `after` and
`contradicted` fields to the registers (idempotent: a second run changes nothing). Entries it
adds carry `reconstructed` (the commit's short hash); existing entries are never changed but
for a missing `after` or `contradicted`.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / "audit_revisions"
CACHE_FORMAT = 3  # bump when a snapshot's content changes
SPINE = "f38b94e"  # chapters as packages with findings.py from this commit on
RESULT = re.compile(r"^results/(?P<chapter>[a-z_]+)/pg[0-9.]+-[a-z]+-(?P<start>\d{8}T\d{6})\.json$")
RUN_WORDS = re.compile(
    r"\b(\d+|two|three|four|five|ten|repeated|several) (\w+[- ])?(\w+ )?runs?\b"
    r"|\b(a|one|this) (tiny|default)(-scale)? run\b|\bin \d+ of \d+\b|\bruns? (on this machine|made while)|verdict_stability", re.I)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # ISO minutes, as the register writes dates
    message: str

    @property
    def short(self) -> str:
        return self.sha[:7]


@cache
def history() -> list[Commit]:
    """Every commit of the checked-out branch, oldest first."""
    out = git("log", "--reverse", "--first-parent", "--format=%H%x1f%aI%x1f%B%x1e")
    commits = []
    for record in out.split("\x1e"):
        if record.strip():
            sha, date, message = record.strip("\n").split("\x1f")
            stamp = datetime.fromisoformat(date).astimezone(timezone.utc).isoformat(timespec="minutes")
            commits.append(Commit(sha, stamp, message.strip()))
    return commits


# --- declarations at a commit -------------------------------------------------------------

SNAPSHOT = r'''
import dataclasses, json, sys, types
sys.path.insert(0, sys.argv[1])
from repro import registry, verdict
try:
    from repro import fingerprint
except ImportError:  # before fingerprints: today's algorithm on this commit's code
    source = open(sys.argv[2], encoding="utf-8").read().replace(
        "m.scale", "getattr(m, 'scale', 'ratio' if m.unit == '×' else 'change' "
        "if m.unit == '%' and getattr(m, 'signed', False) else 'linear')")
    fingerprint = types.ModuleType("repro.fingerprint")
    fingerprint.__package__ = "repro"
    sys.modules["repro.fingerprint"] = fingerprint
    try:
        exec(compile(source, "fingerprint.py", "exec"), fingerprint.__dict__)
    except Exception:
        fingerprint = None

def plain(v):
    return v if isinstance(v, (int, float, str, bool, type(None))) else None

def key(r):
    """A requirement as what makes it (its maker and the numbers it closes over), so that a
    label added later is no change."""
    fn = r.met
    cells = [plain(c.cell_contents) for c in (fn.__closure__ or ())]
    return fn.__qualname__.split(".")[0] + repr([c for c in cells if c is not None])

def threshold(c):
    t = c.threshold
    return [type(t).__name__, *[getattr(t, f.name) for f in dataclasses.fields(t)],
            c.measure.unit, bool(getattr(c.measure, "exact", False))]

out = {}
for name, chapter in registry.chapters().items():
    found = {}
    for f in chapter.findings:
        try:
            measure = fingerprint.of(f) if fingerprint else None
        except Exception:
            measure = None
        found[f.id] = {
            "claim": f.claim.en, "expected": f.expected,
            "holds_if": [c.text().en for c in f.checks],
            "holds_if_ja": [c.text().ja for c in f.checks],
            "checks": [threshold(c) for c in f.checks],
            "requires": [r.label.en if hasattr(r, "label") else key(r) for r in f.requires],
            "requires_ja": [r.label.ja if hasattr(r, "label") else key(r) for r in f.requires],
            "requires_key": sorted(key(r) for r in f.requires),
            "measure": measure}
    out[name] = found
print(json.dumps(out, ensure_ascii=False))
'''


def _imported(commit: Commit) -> dict[str, Any]:
    """The commit's findings as its own code declares them (imported in a subprocess)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", commit.sha, "repro"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        done = subprocess.run([sys.executable, "-c", SNAPSHOT, tmp, str(ROOT / "repro" / "fingerprint.py")],
                              cwd=tmp, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{commit.short}: its findings could not be read:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout)


def _texts(node: ast.AST) -> tuple[str, str] | None:
    """The (ja, en) of a Text(...) call."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Text" and len(node.args) == 2:
        return ast.literal_eval(node.args[0]), ast.literal_eval(node.args[1])
    return None


def _comparisons(tree: ast.Module, name: str) -> list[str]:
    """The comparisons with a number in the check function `name` (its thresholds, as code),
    a module constant they name followed by its value."""
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)
                 and isinstance(n.value.value, (int, float))}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            found = []
            for n in ast.walk(node):
                if not isinstance(n, ast.Compare):
                    continue
                numbers = [c.value for c in ast.walk(n) if isinstance(c, ast.Constant)
                           and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)]
                named = {c.id: constants[c.id] for c in ast.walk(n) if isinstance(c, ast.Name) and c.id in constants}
                if numbers or named:
                    found.append(ast.unparse(n) + "".join(f" [{k} = {v}]" for k, v in sorted(named.items())))
            return found
    return []


def _parsed(commit: Commit) -> dict[str, Any]:
    """Before chapters were packages: the Finding(...) calls of repro/chapters/NAME.py."""
    out: dict[str, Any] = {}
    for path in git("ls-tree", "--name-only", commit.sha, "repro/chapters/").split():
        name = Path(path).stem
        if not path.endswith(".py") or name == "__init__":
            continue
        tree = ast.parse(git("show", f"{commit.sha}:{path}"))
        found = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Finding":
                texts = _texts(node.args[1])
                check = node.args[2].id if len(node.args) > 2 and isinstance(node.args[2], ast.Name) else ""
                expected = next((ast.literal_eval(k.value) for k in node.keywords if k.arg == "expected"), True)
                holds = [f"{check}: {c}" for c in _comparisons(tree, check)]
                found[ast.literal_eval(node.args[0])] = {
                    "claim": texts[1] if texts else "", "expected": expected, "holds_if": holds,
                    "holds_if_ja": None, "checks": holds, "requires": None, "requires_ja": None,
                    "requires_key": None, "measure": None}
        if found:
            out[name] = found
    return out


def declarations(commit: Commit) -> dict[str, Any]:
    """{chapter: {id: declaration}} at the commit (cached per commit)."""
    cached = CACHE / f"{commit.sha}.json"
    if cached.exists():
        data = json.loads(cached.read_text(encoding="utf-8"))
        if data.get("format") == CACHE_FORMAT:
            return data["chapters"]
    found = _imported(commit) if _is_spine(commit) else _parsed(commit)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps({"format": CACHE_FORMAT, "chapters": found}, ensure_ascii=False),
                      encoding="utf-8")
    return found


def _is_spine(commit: Commit) -> bool:
    return _index(commit.sha) >= _index(next(c.sha for c in history() if c.sha.startswith(SPINE)))


@cache
def _index(sha: str) -> int:
    return next(i for i, c in enumerate(history()) if c.sha == sha)


@cache
def touching() -> list[Commit]:
    """The commits whose declarations are read: those that changed anything under repro/."""
    changed = set(git("log", "--first-parent", "--format=%H", "--", "repro").split())
    return [c for c in history() if c.sha in changed]


# --- stored runs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class StoredRun:
    path: str
    chapter: str
    start: datetime
    added: int  # index in history() of the commit that added it
    verdicts: dict[str, dict[str, Any]]  # by finding id, as the run judged it then

    def precedes(self, index: int) -> bool:
        """Seen before the change of commit history()[index]: committed before it or started before it."""
        return self.added < index or self.start < _when(history()[index])


def _when(commit: Commit) -> datetime:
    return datetime.fromisoformat(commit.date)


@cache
def stored_runs() -> dict[str, list[StoredRun]]:
    """Every result file ever added under results/, per chapter, with the verdicts it keeps."""
    index = {c.sha: i for i, c in enumerate(history())}
    added: dict[str, tuple[int, str]] = {}
    sha = ""
    for line in git("log", "--first-parent", "--diff-filter=A", "--name-only", "--format=@%H", "--", "results").splitlines():
        if line.startswith("@"):
            sha = line[1:]
        elif RESULT.match(line) and sha in index:
            added[line] = min(added.get(line, (len(index), "")), (index[sha], sha))
    texts = _blobs([f"{sha}:{path}" for path, (_, sha) in sorted(added.items())])
    runs: dict[str, list[StoredRun]] = {}
    for (path, (i, _)), text in zip(sorted(added.items()), texts):
        match = RESULT.match(path)
        start = datetime.strptime(match["start"], "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
        verdicts = {v["id"]: v for v in json.loads(text).get("verdicts", [])}
        runs.setdefault(match["chapter"], []).append(StoredRun(path, match["chapter"], start, i, verdicts))
    return {k: sorted(v, key=lambda r: (r.start, r.path)) for k, v in runs.items()}


def _blobs(specs: list[str]) -> list[str]:
    """The contents of many `commit:path` at once (git cat-file --batch)."""
    done = subprocess.run(["git", "cat-file", "--batch"], cwd=ROOT, input=("\n".join(specs) + "\n").encode(),
                          capture_output=True, check=True).stdout
    out, at = [], 0
    for _ in specs:
        header_end = done.index(b"\n", at)
        size = int(done[at:header_end].split()[2])
        out.append(done[header_end + 1:header_end + 1 + size].decode("utf-8"))
        at = header_end + 1 + size + 1
    return out


def runs_before(chapter: str, index: int) -> list[StoredRun]:
    return [r for r in stored_runs().get(chapter, []) if r.precedes(index)]


def runs_before_date(chapter: str, date: str) -> list[StoredRun]:
    """The runs seen before an existing register entry (its date, to the minute)."""
    when = datetime.fromisoformat(date)
    return [r for r in stored_runs().get(chapter, [])
            if r.start < when or _when(history()[r.added]) < when]


def contradicted(runs: list[StoredRun], fid: str) -> int:
    return sum(r.verdicts.get(fid, {}).get("status") == "contradicted" for r in runs)


def _named(chapter: str, paths: list[str]) -> list[StoredRun]:
    """The stored runs an `after` names (from the history, where a file was removed since)."""
    wanted = set(paths)
    return [r for r in stored_runs().get(chapter, []) if r.path in wanted]


# --- runs that were not stored ----------------------------------------------------------------

def _paragraphs(text: str) -> list[str]:
    return [p.replace("\n", " ") for p in re.split(r"\n\s*\n", text) if p.strip()]


def _page(commit: Commit, chapter: str) -> list[str]:
    """The chapter page's paragraphs at the commit, in English (its translation's msgstr)."""
    try:
        po = git("show", f"{commit.sha}:locale/en/LC_MESSAGES/chapters/{chapter}.po")
    except subprocess.CalledProcessError:
        return []
    return ["".join(re.findall(r'^\s*"(.*)"\s*$', block.split("msgstr", 1)[1], re.M))
            for block in re.split(r"\n\s*\n", po) if "msgstr" in block]


def _comments(commit: Commit, chapter: str, fid: str) -> list[str]:
    """The comments inside the finding's declaration in findings.py at the commit (named by
    its id, so that the search below finds them)."""
    try:
        source = git("show", f"{commit.sha}:repro/chapters/{chapter}/findings.py")
    except subprocess.CalledProcessError:
        return []
    parts = re.split(r"(?=\bFinding\(\s*\")", source)
    return [f"{fid}: " + " ".join(re.findall(r"#\s*(.*)", part)) for part in parts
            if part.startswith(f'Finding("{fid}"')]


def _module_comments(commit: Commit, chapter: str) -> list[str]:
    """Every comment of the chapter's findings module at the commit, one a line."""
    for path in (f"repro/chapters/{chapter}/findings.py", f"repro/chapters/{chapter}.py"):
        try:
            return re.findall(r"#\s*(.*)", git("show", f"{commit.sha}:{path}"))
        except subprocess.CalledProcessError:
            continue
    return []


def _of_thresholds(commit: Commit, chapter: str) -> tuple[str, str] | None:
    """Words of the commit's message or of a code comment that say the thresholds came from
    runs, naming no finding: they hold for every threshold the commit changed."""
    for where, lines in (("commit", _paragraphs(commit.message)), ("code", _module_comments(commit, chapter))):
        for p in lines:
            if RUN_WORDS.search(p) and re.search(r"\bthresholds?\b", p, re.I) and not re.search(r"\bF\d+\b", p):
                return where, p.strip()
    return None


def unstored(commit: Commit, chapter: str, fid: str, revised: bool) -> tuple[str, str] | None:
    """Where the commit's message, the chapter's page or the finding's code comments at that
    commit report runs behind the finding (for a revision, also words on the thresholds as a
    whole): (where, the words), or None."""
    mention = re.compile(rf"\b{fid}\b")
    for where, paragraphs in (("commit", _paragraphs(commit.message)), ("page", _page(commit, chapter)),
                              ("code", _comments(commit, chapter, fid))):
        for p in paragraphs:
            if mention.search(p) and RUN_WORDS.search(p) and not re.search(r"\b(?<!not )stored\b", p, re.I):
                return where, p.strip()
    return _of_thresholds(commit, chapter) if revised else None


# --- what each finding went through -----------------------------------------------------------

@dataclass
class Change:
    """A declaration or a change of one finding, reconstructed from one commit."""
    chapter: str
    fid: str
    commit: Commit
    index: int
    what: str  # declared, revised
    old: dict[str, Any] | None
    new: dict[str, Any]
    old_ja: dict[str, Any] | None
    new_ja: dict[str, Any]
    runs: list[StoredRun]
    evidence: tuple[str, str] | None = None  # unstored runs: (commit or page, the words)
    source: str = "code"  # code, or the verdicts of the runs the commit stored
    note: str = ""

    @property
    def after(self) -> list[str] | str:
        if self.runs or self.evidence is None:
            return [r.path for r in self.runs]
        where = {"commit": "commit", "page": "the page at commit", "code": "the code comment at commit"}[self.evidence[0]]
        return f"runs not stored, as {where} {self.commit.short} says"

    @property
    def seen_runs(self) -> bool:
        return bool(self.runs) or self.evidence is not None


def _fields(old: dict[str, Any], new: dict[str, Any], comparable: bool) -> list[str]:
    """The register's fields that differ between two snapshots of a finding."""
    changed = []
    if old["expected"] != new["expected"]:
        changed.append("expected")
    if comparable and old["checks"] != new["checks"] and old["holds_if"] != new["holds_if"]:
        changed.append("holds_if")
    if comparable and old["requires_key"] is not None and old["requires_key"] != new["requires_key"] \
            and old["requires"] != new["requires"]:
        changed.append("requires")
    if old["measure"] is not None and new["measure"] is not None and old["measure"] != new["measure"]:
        changed.append("measure")
    return changed


def _ja(snapshot: dict[str, Any], field_: str) -> Any:
    value = snapshot.get(f"{field_}_ja") if field_ in ("holds_if", "requires") else None
    return snapshot[field_] if value is None else value


def _side(snapshot: dict[str, Any], names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    return {k: snapshot[k] for k in names}, {k: _ja(snapshot, k) for k in names}


def code_changes(chapter: str) -> dict[str, list[Change]]:
    """Per finding of the chapter: its first appearance and every change the code made."""
    shas = {c.sha: i for i, c in enumerate(history())}
    found: dict[str, list[Change]] = {}
    previous: dict[str, tuple[Commit, dict[str, Any]]] = {}
    for commit in touching():
        now = declarations(commit).get(chapter, {})
        index = shas[commit.sha]
        for fid, decl in now.items():
            if fid not in previous:
                new, new_ja = _side(decl, ["expected", "holds_if"])
                found.setdefault(fid, []).append(Change(chapter, fid, commit, index, "declared", None, new, None,
                                                        new_ja, runs_before(chapter, index)))
            else:
                before_commit, before = previous[fid]
                names = _fields(before, decl, _is_spine(before_commit) == _is_spine(commit))
                if names:
                    old, old_ja = _side(before, names)
                    new, new_ja = _side(decl, names)
                    found[fid].append(Change(chapter, fid, commit, index, "revised", old, new, old_ja, new_ja,
                                             runs_before(chapter, index)))
                if difflib.SequenceMatcher(None, before["claim"], decl["claim"]).ratio() < 0.4:
                    found[fid][-1].note += f" claim rewritten at {commit.short}: {before['claim']!r} → {decl['claim']!r}"
            previous[fid] = (commit, decl)
        for fid in [k for k in previous if k not in now]:
            found[fid][-1].note += f" id gone at {commit.short}"
            del previous[fid]
    return found


def _view(run: StoredRun, fid: str, code: dict[str, Any]) -> dict[str, Any] | None:
    """The finding as the run judged it (its flag, and its thresholds where it judged checks),
    in the register's terms; None when the run did not judge it."""
    v = run.verdicts.get(fid)
    if v is None or "expected" not in v:
        return None
    checks = v.get("checks") or []
    view = {"expected": v["expected"]}
    if checks:
        ours = [c["holds_if"]["en"] for c in checks]
        same = len(ours) == len(code["holds_if"]) and all(t.endswith(x) for t, x in zip(code["holds_if"], ours))
        view["holds_if"] = code["holds_if"] if same else [f"{c['label']['en']} {c['holds_if']['en']}" for c in checks]
        view["holds_if_ja"] = code["holds_if_ja"] if same else [f"{c['label']['ja']} {c['holds_if']['ja']}" for c in checks]
    return view


def run_changes(chapter: str) -> dict[str, list[Change]]:
    """Changes made after a stored run and before the next commit that touched the code, which
    no commit shows: the run judged the finding otherwise than the commit's code, and
    otherwise than the code before that commit too (else the code's own change covers it)."""
    shas = {c.sha: i for i, c in enumerate(history())}
    spine = [c for c in touching() if _is_spine(c)]
    found: dict[str, dict[str, Change]] = {}
    for run in stored_runs().get(chapter, []):
        later = [c for c in spine if _when(c) > run.start and declarations(c).get(chapter)]
        if not later:
            continue
        nxt = later[0]  # the first commit of the chapter's code after the run started
        at = spine.index(nxt)
        code = declarations(nxt)[chapter]
        prev = declarations(spine[at - 1]).get(chapter, {}) if at else {}
        for fid, decl in code.items():
            view = _view(run, fid, decl)
            if view is None:
                continue
            names = [k for k in ("expected", "holds_if") if k in view and view[k] != decl[k]]
            if not names or (fid in prev and all(view[k] == prev[fid][k] for k in names)):
                continue
            index = shas[nxt.sha]
            old, old_ja = {k: view[k] for k in names}, {k: view.get(f"{k}_ja", view[k]) for k in names}
            new, new_ja = _side(decl, names)
            change = Change(chapter, fid, nxt, index, "revised", old, new, old_ja, new_ja,
                            runs_before(chapter, index), source="runs")
            found.setdefault(fid, {})[nxt.sha] = change  # the latest run before the commit speaks
    return {fid: list(v.values()) for fid, v in found.items()}


# --- the register -----------------------------------------------------------------------------

def register_path(chapter: str) -> Path:
    return ROOT / "repro" / "chapters" / chapter / "registered.json"


def load(chapter: str) -> dict[str, Any]:
    path = register_path(chapter)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@cache
def register_began() -> int:
    """The index of the commit that began the register (its first registered.json)."""
    shas = set(git("log", "--first-parent", "--diff-filter=A", "--format=%H", "--",
                   "repro/chapters/*/registered.json").split())
    return min(i for i, c in enumerate(history()) if c.sha in shas)


def registered_date(entry: dict[str, Any]) -> str | None:
    return next((r["date"] for r in entry.get("revisions", []) if r["what"] == "registered"), None)


RANK = {"declared": 0, "registered": 2}


def _sort(revisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By date; on one date a declaration first and the first registration last (stable)."""
    return sorted(revisions, key=lambda r: (r["date"], RANK.get(r["what"], 1)))


def _covered(entry: dict[str, Any], date: str, name: str) -> bool:
    """An entry of that date already records a change of that field."""
    return any(r["date"] == date and name in (r.get("new") or {}) and r["what"] != "registered"
               for r in entry.get("revisions", []))


@dataclass
class Proposal:
    """What the audit adds to one chapter's register, and what it only reports."""
    chapter: str
    entries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    afters: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)
    counts: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # missing `contradicted`
    changes: dict[str, list[Change]] = field(default_factory=dict)
    unrecorded: list[str] = field(default_factory=list)  # later changes the register lacks (report only)


def propose(chapter: str) -> Proposal:
    register = load(chapter)
    out = Proposal(chapter)
    code, runs = code_changes(chapter), run_changes(chapter)
    began = register_began()
    for fid, entry in sorted(register.items()):
        if entry.get("withdrawn"):
            continue
        registered = registered_date(entry)
        changes = sorted(code.get(fid, []) + runs.get(fid, []), key=lambda c: (c.index, c.what != "declared"))
        out.changes[fid] = changes
        for c in changes:
            if c.what == "declared":
                _as_first_judged(c, changes)
                c.runs = _before_flag(c.runs, fid, c.new["expected"])
            c.evidence = unstored(c.commit, chapter, fid, c.what == "revised" and "holds_if" in c.new)
        for i, r in enumerate(entry["revisions"]):
            if "after" not in r:
                out.afters.setdefault(fid, []).append((i, [x.path for x in runs_before_date(chapter, r["date"])]))
            after = r.get("after", dict(out.afters.get(fid, [])).get(i))
            if isinstance(after, list) and "contradicted" not in r:
                out.counts.setdefault(fid, []).append((i, contradicted(_named(chapter, after), fid)))
        for c in changes:
            entry_ = _entry(c, registered, began, entry, out)
            if entry_ is not None:
                out.entries.setdefault(fid, []).append(entry_)
    return out


def _as_first_judged(declared: Change, changes: list[Change]) -> None:
    """Where the runs stored with the declaring commit judged the finding otherwise than its
    code, it was declared as they judged it first (the change to the code's is a revision)."""
    for x in changes:
        if x.source == "runs" and x.commit == declared.commit:
            declared.new.update(x.old)
            declared.new_ja.update(x.old_ja)


def _before_flag(runs: list[StoredRun], fid: str, expected: bool) -> list[StoredRun]:
    """The runs before the first that judged the finding with this flag: a run that carries
    the flag shows it was set before the run started, though committed after it."""
    carrying = [r.start for r in runs if r.verdicts.get(fid, {}).get("expected") == expected]
    return [r for r in runs if r.start < min(carrying)] if carrying else runs


def _entry(c: Change, registered: str | None, began: int, entry: dict[str, Any], out: Proposal) -> dict[str, Any] | None:
    """The register entry for a reconstructed change, or None (recorded already, before any
    run, or after the register began: then only reported when the register lacks it)."""
    date = c.commit.date
    if registered is None:
        return None
    if c.what == "declared" and date >= registered:
        return None
    if c.index == began and date > registered:
        date = registered  # made in the commit that began the register: hidden in its entry
    elif date >= registered:
        if c.what != "revised" or any(registered < r["date"] <= c.commit.date and set(c.new) & set(r.get("new") or {})
                                      for r in entry["revisions"]):
            return None
        out.unrecorded.append(f"{c.fid} {c.commit.short} {c.commit.date}: {', '.join(c.new)} changed; "
                              f"no register entry recorded it: written now")
    if c.what == "revised" and not c.seen_runs:
        return None
    if c.what == "declared" and any(r["what"] == "declared" for r in entry["revisions"]):
        return None
    new, new_ja = dict(c.new), dict(c.new_ja)
    names = [k for k in (c.new if c.what == "revised" else ()) if not _covered(entry, date, k)]
    if c.what == "revised" and not names:
        return None
    if c.what == "revised":
        new, new_ja = {k: c.new[k] for k in names}, {k: c.new_ja[k] for k in names}
    made = {"date": date, "what": c.what, "old": None if c.what == "declared" else {k: c.old[k] for k in names},
            "new": new, "after": c.after, **({"contradicted": contradicted(c.runs, c.fid)} if c.runs else {}),
            "why": why(c, names, date), "why_ja": why_ja(c, names, date),
            "reconstructed": c.commit.short}
    made["new_ja"] = new_ja
    if c.what == "revised":
        made["old_ja"] = {k: c.old_ja[k] for k in names}
    return made


def _title(commit: Commit) -> str:
    title = commit.message.splitlines()[0]
    return title if len(title) <= 240 else title[:237] + "..."


def _runs_en(c: Change) -> str:
    where = {"commit": "The commit's message", "page": "The chapter's page at that commit",
             "code": "The finding's code comment at that commit"}[c.evidence[0]] if c.evidence else ""
    if c.runs:
        m = contradicted(c.runs, c.fid)
        return (f"{len(c.runs)} stored run(s) of the chapter preceded it (started before the commit or committed "
                f"earlier); {m} of them judged this finding contradicted, by their own verdicts."
                + (f" Runs not stored are reported too: {where} says: “{c.evidence[1][:400]}”" if c.evidence else ""))
    if c.evidence:
        return f"No run was stored before it, but runs had been made: {where} says: “{c.evidence[1][:400]}”"
    return "No run of the chapter had been stored, and neither the commit nor the page reports one."


def _runs_ja(c: Change) -> str:
    if c.runs:
        return (f"その前に章の保存された実行が {len(c.runs)} 回ありました (コミットより前に開始、または先にコミット)。"
                f"そのうち {contradicted(c.runs, c.fid)} 回は、実行自身の判定でこの知見を反証していました。"
                + ("保存されない実行の記述もあります (英語の理由を参照)。" if c.evidence else ""))
    if c.evidence:
        where = {"commit": "コミットメッセージ", "page": "そのコミットの章のページ", "code": "そのコミットの知見のコードのコメント"}[c.evidence[0]]
        return f"それより前に保存された実行はありませんが、保存されない実行がありました ({where}が英語でそう述べています)。"
    return "章の実行はまだ保存されておらず、コミットにもページにも実行の記述はありません。"


def why(c: Change, names: list[str], date: str) -> str:
    hidden = f" (commit of {c.commit.date}, which began the register)" if date != c.commit.date else ""
    source = (" The runs stored with this commit had judged the finding otherwise than its code, so the change "
              "was made after them." if c.source == "runs" else "")
    head = "First declared" if c.what == "declared" else f"{', '.join(names)} changed"
    return (f"{head} in commit {c.commit.short}{hidden}: {_title(c.commit)}.{source} {_runs_en(c)} "
            f"Reconstructed from the history by scripts/audit_revisions.py.")


FIELDS_JA = {"expected": "期待の有無", "holds_if": "成り立つ条件", "requires": "要件", "measure": "測定値の計算"}


def why_ja(c: Change, names: list[str], date: str) -> str:
    hidden = " (登録簿を始めたコミット)" if date != c.commit.date else ""
    source = ("このコミットで保存された実行は、コミットのコードとは違う宣言で判定していたので、変更はそれらの実行の後です。"
              if c.source == "runs" else "")
    head = "初めて宣言" if c.what == "declared" else f"{'・'.join(FIELDS_JA[k] for k in names)}を変更"
    return (f"コミット {c.commit.short}{hidden} で{head}しました (理由はコミットメッセージ、英語)。{source}{_runs_ja(c)}"
            f"scripts/audit_revisions.py が履歴から再構成しました。")


def apply(register: dict[str, Any], proposal: Proposal) -> dict[str, Any]:
    """The register with the proposal's `after` fields and entries in it (a new dict)."""
    out = json.loads(json.dumps(register))
    for fid, afters in proposal.afters.items():
        for i, after in afters:
            out[fid]["revisions"][i]["after"] = after
    for fid, counts in proposal.counts.items():
        for i, k in counts:
            out[fid]["revisions"][i]["contradicted"] = k
    for fid, entries in proposal.entries.items():
        out[fid]["revisions"] = _sort(out[fid]["revisions"] + entries)
    return out


def write(chapter: str, register: dict[str, Any]) -> None:
    """As repro/claims.py writes a register."""
    register_path(chapter).write_text(json.dumps(register, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                      encoding="utf-8")


# --- the report -------------------------------------------------------------------------------

def _runs_text(after: list[str] | str | None) -> str:
    if after is None:
        return "runs seen before: not recorded"
    if isinstance(after, str):
        return after
    if not after:
        return "before any stored run"
    names = ", ".join(Path(p).name for p in after[-3:])
    return f"after {len(after)} stored run(s) (last: {names})"


def _status(c: Change, proposal: Proposal, register: dict[str, Any]) -> str:
    """What the register does with the change: where it records it, or why it does not."""
    def made_by_audit(entries: list[dict[str, Any]]) -> bool:
        return any(e.get("reconstructed") == c.commit.short and e["what"] == c.what
                   and set(e["new"] or {}) & set(c.new) for e in entries)
    if made_by_audit(proposal.entries.get(c.fid, [])):
        return "TO ADD"
    if made_by_audit(register.get(c.fid, {}).get("revisions", [])):
        return "recorded by this audit"
    registered = registered_date(register.get(c.fid, {})) or ""
    if c.commit.date >= registered and c.index != register_began():
        return "after the register began"
    if c.what == "revised" and not c.seen_runs:
        return "before any run: not recorded"
    return "recorded already"


def report(proposals: list[Proposal], registers: dict[str, dict[str, Any]]) -> str:
    from repro import claims  # the worktree's own: the schema's reading of `after`
    lines = []
    for p in proposals:
        lines.append(f"== {p.chapter}")
        for fid, changes in p.changes.items():
            for c in changes:
                old = "—" if c.old is None else json.dumps(c.old, ensure_ascii=False)
                lines.append(f"  {fid} {c.commit.date} {c.commit.short} {c.what} ({c.source}): {old} → "
                             f"{json.dumps(c.new, ensure_ascii=False)}; {_runs_text(c.after)}"
                             f"{'; evidence: ' + c.evidence[1][:160] if c.evidence else ''}{c.note}"
                             f" [{_status(c, p, load(p.chapter))}]")
        for line in p.unrecorded:
            lines.append(f"  NOT IN THE REGISTER BEFORE (after it began): {line}")
        added = sum(len(v) for v in p.entries.values())
        afters = sum(len(v) for v in p.afters.values())
        counts = sum(len(v) for v in p.counts.values())
        lines.append(f"  -> {added} entries to add, {afters} existing entries to get 'after', "
                     f"{counts} to get 'contradicted'")
    lines.append("")
    lines.append("== Summary: findings not expected to hold here")
    for p in proposals:
        for fid, entry in sorted(registers[p.chapter].items(), key=lambda kv: int(kv[0][1:])):
            if entry.get("expected", True) or entry.get("withdrawn"):
                continue
            e = claims.expectation(registers[p.chapter], fid, False)
            day = (e.since or "?")[:10]
            if e.after is None:
                said = f"not expected since {day}; the register does not say after what"
            elif isinstance(e.after, str):
                said = f"declared on {day} after runs not stored ({e.after})"
            elif not e.after:
                said = f"predicted on {day} before any run"
            else:
                runs = [r for r in stored_runs()[p.chapter] if r.path in set(e.after)]
                said = (f"declared on {day} after {len(e.after)} runs "
                        f"({contradicted(runs, fid)} of them contradicted it)")
            lines.append(f"  {p.chapter} {fid}: {said}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="add the entries and `after` fields to the registers")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    chapters = sorted(p.parent.name for p in (ROOT / "repro" / "chapters").glob("*/registered.json"))
    proposals = [propose(ch) for ch in chapters]
    registers = {p.chapter: apply(load(p.chapter), p) for p in proposals}
    print(report(proposals, registers))
    added = sum(len(v) for p in proposals for v in p.entries.values())
    afters = sum(len(v) for p in proposals for v in p.afters.values())
    counts = sum(len(v) for p in proposals for v in p.counts.values())
    print(f"\n{added} entries, {afters} 'after' and {counts} 'contradicted' fields added" if args.write else
          f"\n{added} entries, {afters} 'after' and {counts} 'contradicted' fields would be added (--write adds them)")
    if args.write:
        for p in proposals:
            if p.entries or p.afters or p.counts:
                write(p.chapter, registers[p.chapter])


if __name__ == "__main__":
    main()
