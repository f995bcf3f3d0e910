"""Harness code out of the key (#72): the key walk follows repro/lab/harness/ but does not
hash it, so fixing the harness restarts no pool, while what the harness reaches elsewhere
(treatment, measure) stays keyed. The harness is the reviewed set below: moving code into
it changes this test. Each test edits a copy of repro/ as tests/test_keys.py does."""
from __future__ import annotations

import re
from pathlib import Path

from repro import fingerprint, reach
from repro.results import ROOT
from test_keys import CHAPTERS, DSN, add_statement, functions, keys, reached, tree, write  # noqa: F401 (tree: a fixture)

# Everything in repro/lab/harness/, by module and qualified name ("" is a module's body, a
# class alone its header): reviewed as harness (notes/lab-harness-review.md), the 25 pure
# harness definitions every chapter reached and the harness halves of the split ones.
HARNESS = {"repro.lab.harness:"} | {f"repro.lab.harness.{unit}" for unit in (
    "connections:", "connections:Endpoint", "connections:Endpoint._client_exec", "connections:Endpoint._connect",
    "connections:Endpoint.conninfo", "connections:Endpoint.docker", "connections:Endpoint.put_file",
    "connections:Endpoint.run", "connections:InContainer", "connections:InContainer.__init__",
    "connections:InContainer._exec",
    "connections:InContainer.peer_conninfo", "connections:InContainer._start_again", "connections:InContainer.conninfo",
    "connections:InContainer.docker", "connections:InContainer.wait_ready", "connections:InContainer._name",
    "connections:InContainer._last_lines", "connections:STARTED_WITH", "connections:Endpoint.client_runs",
    "connections:use_of", "connections:Endpoint.reloads", "connections:_counted",
    "containers:", "containers:Containers", "containers:Containers.__enter__", "containers:Containers.__exit__",
    "containers:Containers.__init__", "containers:Containers._container", "containers:Containers._creating",
    "containers:Containers._describe_config", "containers:Containers._image", "containers:Containers._interrupt",
    "containers:Containers._ready", "containers:Containers.close",
    "containers:Containers.network", "containers:host_config", "containers:Started", "containers:Started.wait_ready",
    "containers:StartedServer",
    "containers:PASSWORD_FILE", "containers:RUN_LABEL", "containers:SIGNALS", "containers:START_TIMEOUT_S",
    "containers:leftovers",
    "context:", "context:Context", "context:Context.__init__", "context:Context.external", "context:Context.major",
    "context:Context.record", "context:Context.server", "context:Context.step",
    "images:", "images:Image", "images:Image.key", "images:LABEL", "images:client", "images:resolve_image",
    "progress:", "progress:Progress", "progress:Progress.__init__", "progress:Progress.note", "progress:_clock",
    "waiting:", "waiting:Value", "waiting:until",
    "connections:Endpoint.tracer",  # #71: where strace runs (ContainerServer's, LocalServer's)
    "connections:Endpoint.cpu_counters",  # #71: the run's own CPU (ContainerServer's, LocalServer's)
    "context:Context.with_images",  # #71: whether the project's own builds (images) can run beside
)}


def units_in(root: Path) -> set[str]:
    """Every definition of repro/lab/harness/ in a tree, as "module:qualified name"."""
    found = set()
    for path in sorted((root / "repro" / "lab" / "harness").rglob("*.py")):
        name = reach.name_of(path, (root,))
        found |= {f"{name}:{qual}" for qual in reach.module(name, path).units}
    return found


def test_the_harness_is_the_reviewed_set() -> None:
    assert units_in(ROOT) == HARNESS
    assert all(reach.harness(tuple(u.split(":"))) for u in HARNESS)


def test_the_walk_follows_the_harness(tmp_path: Path) -> None:
    """Every chapter reaches harness code, and through it keyed code: the container's spec and
    its fixed settings (Lab.server), which the chapters ask for through ctx.server."""
    for name, units in reached(ROOT).items():
        assert {"repro.lab.harness.context:Context.server", "repro.lab.servers:Lab.server",
                "repro.lab.servers:fixed_settings"} <= units, name
    write(tmp_path / "repro" / "lab" / "harness" / "h.py", "from ..t import treat\n\ndef start():\n    return treat()\n")
    write(tmp_path / "repro" / "lab" / "t.py", "def treat():\n    return 1\n")
    write(tmp_path / "repro" / "chapters" / "c" / "experiment.py",
          "from ...lab.harness.h import start\n\ndef run(ctx):\n    start()\n")
    found = fingerprint.reached(tmp_path / "repro" / "chapters" / "c" / "experiment.py")
    assert "treat" in found and "start" not in found and "start=start" in found["run"]


def test_a_statement_more_in_any_harness_definition_changes_no_key(tree: Path) -> None:
    """A statement at the top of each function and class of the harness and at the end of each
    of its modules, and another value for each of its constants: on containers and against an
    existing server alike."""
    before, before_dsn = keys(tree), keys(tree, DSN)
    for unit in sorted(HARNESS):
        module, qual = unit.split(":")
        path = tree.joinpath(*module.split(".")).with_suffix(".py")
        if not path.exists():
            path = path.with_suffix("") / "__init__.py"
        if not qual:
            path.write_text(path.read_text() + "\npass\n")
        elif re.search(rf"^{qual} = ", path.read_text(), flags=re.M):  # a constant, a type variable
            text, count = re.subn(rf"^{qual} = ", f"{qual} = 0 or ", path.read_text(), flags=re.M)
            assert count == 1, unit
            path.write_text(text)
        else:
            add_statement(tree, unit)
    assert units_in(tree) == HARNESS
    assert keys(tree) == before
    assert keys(tree, DSN) == before_dsn


def test_an_edit_to_treatment_or_measure_changes_exactly_the_keys_of_the_chapters_that_reach_it(tree: Path) -> None:
    """Each function of the lab outside the harness that a chapter reaches, edited in turn."""
    found = reached(tree)
    keyed = sorted(functions(set().union(*found.values())))
    assert {"repro.lab.servers:Lab.server", "repro.lab.servers:Lab.absent", "repro.lab.servers:Server.sql",
            "repro.lab.servers:ContainerServer._client_exec", "repro.lab.servers:ContainerServer.restart",
            "repro.lab.clock:Stopwatch.elapsed"} <= set(keyed)
    before = keys(tree)
    for unit in keyed:
        add_statement(tree, unit)
        after = keys(tree)
        assert {n for n in CHAPTERS if after[n] != before[n]} == {n for n in CHAPTERS if unit in found[n]}, unit
        before = after


def test_an_edit_to_the_fixed_settings_changes_every_key(tree: Path) -> None:
    before = keys(tree)
    add_statement(tree, "repro.lab.servers:fixed_settings")
    after = keys(tree)
    assert all(after[n] != before[n] for n in CHAPTERS)
