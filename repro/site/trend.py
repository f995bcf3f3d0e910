"""A finding across majors (repro-trend NAME FID): the value of the check its matrix row
shows (pooling.row_checks), pooled per major with its 95 % interval, as a line over the
majors that have runs, beside the threshold it is judged by and the original's value where
that compares: how a finding moved from major to major, in one picture."""
from __future__ import annotations

from docutils import nodes

from .. import majors, pooling, sizes
from ..chapter import Chart, Series
from ..errors import ReproError
from ..text import Text
from . import store
from .nodes import ChapterDirective, para
from .pieces import chart_figure

TITLE = Text("{fid}: {label}、メジャーバージョンごと", "{fid}: {label}, per major")
OURS = Text("プールした実行 (95% 信頼区間)", "pooled runs (95 % interval)")
ORIGINAL = Text("原典の値", "the original's value")
HOLDS = Text("判定条件: {threshold}", "holds if {threshold}")
RUNS = Text("各メジャーバージョンの値は、そのメジャーバージョンの保存された実行をプールした推定値です ({runs})。",
            "Each major's value pools that major's stored runs ({runs}).")


class TrendDirective(ChapterDirective):
    """The chart of one finding across majors."""

    required_arguments = 2
    optional_arguments = 0

    def build(self) -> list[nodes.Node]:
        name, fid = self.arguments
        self.depend_on(name)
        chapter = self.chapter()
        finding = next((f for f in chapter.findings if f.id == fid), None)
        if finding is None:
            raise ReproError(f"{name} has no finding {fid!r}")
        pools = {m: s.pool for m, s in store.majors(name, self.scale).items() if s.pool is not None}
        index = pooling.row_checks(pools, self.site_major).get(fid)
        points = []  # (major, value, low, high, runs)
        for major, pool in sorted(pools.items()):
            v = next((v for v in pool.verdicts if v.finding.id == fid), None)
            if v is None:  # no run judged it there (not applicable to that major)
                continue
            c, _ = pooling.row_check(pool, v, index)
            e = c.estimate if c is not None else None
            if e is not None and e.value is not None:
                points.append((major, e.value, e.low, e.high, v.runs))
        if index is None or not points:
            return [para(f"{fid}: —")]
        check = finding.checks[index]
        n = len(points)
        series = [Series(OURS, [p[1] for p in points], [p[2] for p in points], [p[3] for p in points])]
        series += [Series(HOLDS.format(threshold=check.threshold.text(check.measure)(self.lang)), [limit] * n,
                          reference=True) for limit in check.threshold.limits()]
        original = sizes.parse(chapter).get(fid)
        if original is not None and original.why is None and original.values[index] is not None:
            series.append(Series(ORIGINAL, [original.values[index]] * n, reference=True))
        label, unit = check.measure.label, check.measure.unit
        chart = Chart(TITLE.format(fid=fid, label=label(self.lang)),
                      [Text(majors.name(p[0]), majors.name(p[0])) for p in points], series,
                      Text(f"{label.ja} [{unit}]", f"{label.en} [{unit}]") if unit else label,
                      Text("PostgreSQL", "PostgreSQL"), kind="line")
        figure = chart_figure(self, chart, f"{name}-trend-{fid}")
        self.add_name(figure)
        runs = ", ".join(f"{majors.name(p[0])}: {p[4]}" for p in points)
        return [figure, para(RUNS(self.lang).format(runs=runs), ["repro-source"])]
