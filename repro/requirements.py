"""What a finding needs of where a result was measured, in both languages: each
requirement's test, what it lacks as a short label (the badge shows it, the claims register
records it) and the reason a page gives; and what a claim over several kinds covers. The
judge (repro/verdict.py) leaves a run that misses one out of the verdict: with none left,
the finding is not applicable there."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .text import Text


@dataclass(frozen=True)
class Environment:
    """Where a result was measured, as requirements see it."""

    major: int
    cpus: int | None
    features: frozenset[str]
    raw: dict[str, Any]
    external: bool = False  # an existing server (--dsn), not containers of the run
    local: bool = False  # clusters of this machine's binaries (--server local)


@dataclass(frozen=True)
class Scope:
    """What a claim over several kinds ("every index kind") covers: each kind's name, by
    key, and the keys a run measured. Reproduced on some of them only is reproduced in part."""

    names: dict[str, str]
    measured: Callable[[Environment], Sequence[str]]

    def missing(self, envs: Sequence[Environment]) -> tuple[list[str], list[str]]:
        """(the names measured by any of the runs, the names none measured)."""
        seen = {k for e in envs for k in self.measured(e)}
        return ([n for k, n in self.names.items() if k in seen],
                [n for k, n in self.names.items() if k not in seen])

    def reason(self, measured: Sequence[str], missing: Sequence[str]) -> Text:
        if not measured:
            return Text(f"{' と '.join(missing)} はここでは測っていません", f"{_and(missing)} not measured here")
        return Text(f"{'、'.join(measured)} で再現、{' と '.join(missing)} はここでは未測定",
                    f"reproduced for {_and(measured)}; {_and(missing)} not measured here")


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class Requirement:
    """What a finding needs of the environment; otherwise it is not applicable here.
    `label` names what is lacking, short ("≥ 3 CPUs", "pg_bigm"): the badge shows it and the
    claims register records it."""

    met: Callable[[Environment], bool]
    reason: Callable[[Environment], Text]
    label: Text
    of_major: bool = False  # scopes a finding to some majors, rather than asking the machine
    of_image: bool = False  # asks the image for a package that not every machine can install
    of_target: bool = False  # needs a server of the run's own (not an existing one)


def _has(e: Environment) -> Text:
    """The CPUs the result's server had, as a requirement's reason says it."""
    if e.cpus is None:
        return Text("既存のサーバーの CPU 数はここからは分かりません", "an existing server's CPU count is not known here")
    return Text(f"このエンジンは {e.cpus} 個", f"this engine has {e.cpus}")


def min_cpus(n: int) -> Requirement:
    return Requirement(lambda e: e.cpus is not None and e.cpus >= n,
                       lambda e: Text(f"CPU が {n} 個以上要ります ({_has(e).ja})。",
                                      f"Needs at least {n} CPUs ({_has(e).en})."),
                       Text(f"CPU {n} 個以上", f"≥ {n} CPUs"))


def max_cpus(n: int) -> Requirement:
    """For a claim scoped to small machines (what holds on n CPUs need not on many)."""
    return Requirement(lambda e: e.cpus is not None and e.cpus <= n,
                       lambda e: Text(f"CPU が {n} 個以下のマシンについての主張です ({_has(e).ja})。",
                                      f"A claim about machines of at most {n} CPUs ({_has(e).en})."),
                       Text(f"CPU {n} 個以下", f"≤ {n} CPUs"))


def own_server(what: Text) -> Requirement:
    """What only a server the run starts allows (a restart, a preload, a second server, the
    server's machine): against an existing server (--dsn) the finding is not applicable."""
    return Requirement(lambda e: not e.external,
                       lambda e: Text(f"既存のサーバーに対しては判定できません。必要なもの: {what.ja}。",
                                      f"Not applicable against an existing server: needs {what.en}."),
                       what, of_target=True)


def images_only(what: Text) -> Requirement:
    """What only the project's own images hold (a build of its own, run beside the server): as
    `own_server`, and on local clusters of this machine's binaries the finding is not
    applicable either."""
    def reason(e: Environment) -> Text:
        if e.external:
            return own_server(what).reason(e)
        return Text(f"ローカルのクラスターでは判定できません。必要なもの: {what.ja} (プロジェクトのイメージにだけあります)。",
                    f"Not applicable on local clusters: needs {what.en}, which only the project's images hold.")
    return Requirement(lambda e: not e.external and not e.local, reason, what, of_target=True)


def binaries_beside(major: str) -> Requirement:
    """The server of `major` beside the run's own, which a local run goes without where the
    machine has no binaries of that major (local_context.beside records it in
    "beside_missing"). Not a finding's declared requirement: what a finding compares with
    (Finding.beside), which every other run has."""
    return Requirement(lambda e: major not in e.raw.get("beside_missing", []),
                       lambda e: Text(f"ここでは判定できません。{major} のバイナリが要ります (make binaries MAJORS={major})。",
                                      f"Not applicable here: needs the binaries of {major} (make binaries MAJORS={major})."),
                       Text(f"{major} のバイナリ", f"binaries of {major}"))


def majors(first: int | None = None, last: int | None = None, why: Text | None = None
           ) -> Requirement:
    span = Text(f"PostgreSQL {first} 以降", f"PostgreSQL {first} or later") if last is None else \
        Text(f"PostgreSQL {last} まで", f"PostgreSQL {last} or earlier") if first is None else \
        Text(f"PostgreSQL {first}〜{last}", f"PostgreSQL {first} to {last}")

    def met(e: Environment) -> bool:
        return (first is None or e.major >= first) and (last is None or e.major <= last)

    def reason(e: Environment) -> Text:
        head = Text(f"{span.ja}が対象です (この結果は {e.major})。", f"Applies to {span.en} (this result: {e.major}).")
        return Text.join([head, why], "", " ") if why else head
    return Requirement(met, reason, span, of_major=True)


def feature(name: str, why: Text | None = None) -> Requirement:
    """An image feature (an extension, a tool); `why` says how an image gets it."""
    def reason(e: Environment) -> Text:
        head = Text(f"このサーバーには {name} がありません。", f"This server has no {name}.") if e.external else \
            Text(f"このバイナリには {name} がありません。", f"These binaries have no {name}.") if e.local else \
            Text(f"このイメージには {name} がありません。", f"This image has no {name}.")
        return Text.join([head, why], "", " ") if why else head
    return Requirement(lambda e: name in e.features, reason, Text(name, name), of_image=True)


def data(key: str, why: Text, label: Text) -> Requirement:
    """A property the run recorded in its raw data (e.g. what an extension can count)."""
    return Requirement(lambda e: bool(e.raw.get(key)), lambda e: why, label)
