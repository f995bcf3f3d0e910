"""Where, when and with what a result was measured (repro-provenance)."""
from __future__ import annotations

import re
from typing import Any

from docutils import nodes

from .. import majors
from ..chapter import Run, Table
from ..text import Text
from .nodes import ChapterDirective, table_node, timestamp


TARGETS = {"container": Text("この実行が起動したコンテナー", "containers this run started"),
           "external server (DSN)": Text("既存のサーバー (DSN)", "an existing server (DSN)")}


PROVENANCE = [
    ("started", Text("開始時刻", "Started")),
    ("duration", Text("所要時間 [s]", "Duration [s]")),
    ("scale", Text("スケール", "Scale")),
    ("target", Text("対象", "Target")),
    ("version", Text("PostgreSQL", "PostgreSQL")),
    ("image", Text("イメージ (名前、ID、由来、使える機能)", "Image (name, id, origin, features)")),
    ("cpu", Text("CPU (エンジン側)", "CPU (engine side)")),
    ("memory", Text("メモリ [GiB]", "Memory [GiB]")),
    ("kernel", Text("カーネル、OS", "Kernel, OS")),
    ("storage", Text("ストレージドライバー", "Storage driver")),
    ("clocksource", Text("クロックソース", "Clock source")),
    ("docker", Text("Docker エンジン", "Docker engine")),
    ("code", Text("コード (git コミット、実験のハッシュ)", "Code (git commit, experiment hash)")),
    ("params", Text("スケールのパラメーター", "Scale parameters")),
]


# The site writes these katakana words with the long vowel mark; a server's role label is
# stored in each result as its experiment wrote it (fulltext's said サブスクライバ until its
# experiment next changes: editing it now would start that chapter's history again).
_SPELLING = re.compile("(サブスクライバ|パブリッシャ)(?!ー)")


def role_label(role: dict[str, str] | str) -> Text:
    """A server's role as the page writes it, from the label stored with the run."""
    text = Text(**role) if isinstance(role, dict) else Text(role, role)
    return Text(_SPELLING.sub(r"\1ー", text.ja), text.en)


def provenance_values(doc: dict[str, Any]) -> dict[str, Any]:
    prov, host = doc["provenance"], doc["provenance"]["host"]
    servers = prov["servers"]
    git = prov.get("git") or {}
    commit = (git.get("commit") or "—")[:12] + (" (+ changes)" if git.get("dirty") else "")
    return {
        "started": timestamp(prov["started"]), "duration": f"{prov['duration_s']:.0f}",
        "scale": doc["scale"], "target": TARGETS.get(prov["target"], Text(prov["target"], prov["target"])),
        "version": "; ".join(sorted({s["version"].split(" on ")[0] for s in servers})) or "—",
        "image": "; ".join(sorted({f"{s['image']['name']}, {s['image']['id'][7:19]}, "
                                   f"{s['image']['origin']}" + _features(s["image"])
                                   for s in servers if s["image"]})) or "—",
        "cpu": f"{host.get('engine_cpus')} ({host.get('cpu_model') or '—'})",
        "memory": str(host.get("memory_gib")), "kernel": f"{host.get('kernel')}, {host.get('os')}",
        "storage": str(host.get("storage_driver")), "clocksource": host.get("clocksource") or "—",
        "docker": f"{host.get('docker_version')} ({host.get('docker_host')})",
        "code": f"{commit}, {prov['experiment']}",
        "params": ", ".join(f"{k}={v}" for k, v in doc["scale_params"].items()),
    }


def _features(image: dict[str, Any]) -> str:
    """What worked in the image (results before 2026-11-25 did not record it)."""
    return f" ({', '.join(image['features']) or '—'})" if "features" in image else ""


ABSENT = Text(" (PostgreSQL {major} にない設定のため外したもの: {names})",
              " (left out, as PostgreSQL {major} does not have them: {names})")


class ProvenanceDirective(ChapterDirective):
    """Where, when and with what the chapter's numbers were measured."""

    def build_run(self, run: Run) -> list[nodes.Node]:
        values = provenance_values(run.doc)
        rows: list[list[Any]] = [[label, values[key]] for key, label in PROVENANCE]
        for s in run.doc["provenance"]["servers"]:
            settings = ", ".join(f"{k}={v}" for k, v in s["settings"].items())
            if absent := ", ".join(s.get("absent_settings", [])):
                settings += ABSENT(self.lang).format(names=absent, major=majors.name(run.major))
            role = role_label(s["role"])
            rows.append([Text(f"設定: {role.ja}", f"Settings: {role.en}"), settings])
        table = Table(Text("実行環境と来歴", "Provenance"), [Text("項目", "Item"), Text("値", "Value")],
                      rows)
        out = table_node(table, self.lang)
        out[0]["classes"].append("repro-provenance")
        return out
