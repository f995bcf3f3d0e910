"""The contributors' guide (docs/contributing.md) is the code: every file, directive, option
and name it gives exists, and everything the code requires of a chapter (the files chapters
have, the page's directives, the registry's names, the register's options, the sources'
fields) is in it. The English catalogue follows the Japanese (scripts/check_po.py)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from repro import cli, registry, scaffold
from repro.chapter import PAGE_DIRECTIVES, SOURCE_FIELDS
from repro.site import api, sphinxext

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
EXAMPLE = "wal_compression"  # the guide's example chapter
QUOTED = set(re.findall(r"`([^`\n]+)`", GUIDE))
NAMED = QUOTED | {w for q in QUOTED for w in re.findall(r"[\w./{}-]+", q)}  # `TABLES`, `make test`
PACKAGE = Path("repro") / "chapters" / scaffold.PLACEHOLDER


def _chapter_files() -> set[str]:
    """The files any chapter package or the template's has, as the guide names them
    (`files/` for the folder)."""
    packages = [c.package for c in registry.chapters().values()] + [scaffold.TEMPLATE / PACKAGE]
    return {p.name + "/" if p.is_dir() else p.name for package in packages for p in package.iterdir()
            if p.name != "__pycache__"}


def _directives() -> dict[str, type]:
    """The directives and roles the site registers, by name."""
    found: dict[str, type] = {}

    class App:
        def __getattr__(self, _: str):
            return lambda *a, **k: None

        def add_directive(self, name: str, directive: type) -> None:
            found[name] = directive

        def add_role(self, name: str, role: object) -> None:
            found[name] = type(role)
    sphinxext.setup(App())
    return found


def _options() -> set[str]:
    """Every option of `python -m repro`'s subcommands."""
    parser = cli.parser()
    subs = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict)).choices
    return {o for s in subs.values() for a in s._actions for o in a.option_strings}


def test_every_file_the_guide_names_exists() -> None:
    """A path is the project's or the template's (`{{name}}` for the example's name or NAME);
    a bare file name is a test module or one a chapter package has."""
    files = _chapter_files()
    missing = []
    for name in sorted(n for n in QUOTED if re.fullmatch(r"[\w./-]+\.(py|toml|json|md|po)|[\w/]+/", n)):
        template = name.replace(EXAMPLE, scaffold.PLACEHOLDER).replace("NAME", scaffold.PLACEHOLDER)
        if not any(p.exists() for p in (ROOT / name, ROOT / "tests" / name, scaffold.TEMPLATE / template)) \
                and name not in files:
            missing.append(name)
    assert not missing, f"the guide names files that neither the project nor a chapter has: {missing}"


def test_the_guide_names_every_file_a_chapter_has() -> None:
    """Each file of a chapter package (the template's included) is in the guide's table."""
    assert not _chapter_files() - NAMED, f"files chapters have that the guide does not name: " \
                                         f"{sorted(_chapter_files() - NAMED)}"
    made = {str(p).replace(scaffold.PLACEHOLDER, EXAMPLE) for p in scaffold.template_files()
            if not p.is_relative_to(PACKAGE)}
    assert made <= NAMED, f"files the scaffold makes that the guide does not name: {sorted(made - NAMED)}"


def test_every_directive_and_option_the_guide_names_exists() -> None:
    """Directives and roles, their options, `python -m repro`'s options, make's targets and variables."""
    directives = _directives()
    named = set(re.findall(r"\{(repro-[\w-]+)\}", GUIDE))
    assert named <= set(directives), f"directives and roles the guide names that the site lacks: {named - set(directives)}"
    options = {o for d in directives.values() for o in (getattr(d, "option_spec", None) or {})}
    named_options = set(re.findall(r"`:(\w+):", GUIDE))
    assert named_options <= options, f"directive options the site lacks: {named_options - options}"
    flags = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", GUIDE))
    assert flags <= _options(), f"options the guide names that `python -m repro` lacks: {flags - _options()}"
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w%-]+):", makefile, flags=re.M))
    for command in re.findall(r"`make ([^`]+)`", GUIDE) + re.findall(r"^\$ make (.+)$", GUIDE, flags=re.M):
        for word in command.split():
            name, is_variable, _ = word.partition("=")
            known = re.search(rf"^{name} \??=", makefile, flags=re.M) if is_variable else \
                name in targets or name.startswith("repro-") and "repro-%" in targets
            assert known, f"`make {command}`: the Makefile has no {'variable' if is_variable else 'target'} {name}"


def test_the_guide_names_what_the_code_requires() -> None:
    """The page's required directives, the register's options, what the registry reads of a
    package, the sources' fields and the findings' words are all in the guide."""
    missing = [d for d in PAGE_DIRECTIVES if f"{{{d}}}" not in GUIDE]
    register = next(a for a in cli.parser()._actions if a.choices and isinstance(a.choices, dict)).choices["register"]
    missing += [o for a in register._actions for o in a.option_strings if o.startswith("--") and o != "--help"
                and o not in GUIDE]
    build = ast.unparse(next(n for n in ast.parse(Path(registry.__file__).read_text()).body
                             if isinstance(n, ast.FunctionDef) and n.name == "build"))
    read = set(re.findall(r"\b(?:init|analysis|findings|page)\.([A-Za-z_]+)", build))
    read |= set(re.findall(r"getattr\((?:init|page), '(\w+)'", build))
    missing += sorted(read - {"__name__", "__file__"} - NAMED)
    missing += [f for f in SOURCE_FIELDS if f not in NAMED]
    words = set(re.findall(r"(?:\[|get\()\"(\w+)\"", (ROOT / "repro" / "wording.py").read_text())) - {"ja", "en"}
    missing += sorted(words - NAMED)
    missing += [k for k in ("[scale]", "rounds", "max_rounds", "budget_s") if k not in NAMED]
    assert not missing, f"what the code requires of a chapter that the guide does not name: {missing}"


@pytest.mark.parametrize("module, name", [("repro.lab.context", "RunContext"), ("repro.lab.servers", "Lab"),
                                          ("repro.lab.servers", "Server"), ("repro.lab.servers", "ContainerServer")])
def test_the_ctx_api_the_guide_shows_is_documented(module: str, name: str) -> None:
    """The guide shows these classes from their docstrings (repro-api): every public member
    has one, and the guide shows each class."""
    assert re.search(rf"\{{repro-api\}} {re.escape(module)} {name} ", GUIDE)
    doc, members = api.members(module, name)
    assert doc and members
