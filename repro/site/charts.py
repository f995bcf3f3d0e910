"""Charts drawn with matplotlib at build time, one PNG per chart and language."""
from __future__ import annotations

import io
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from ..chapter import Chart, Series  # noqa: E402
from ..results import write_atomically  # noqa: E402
from ..text import Number  # noqa: E402

# Debian's fonts-noto-cjk draws the Japanese labels; DejaVu is matplotlib's own fallback.
FONTS = ["Noto Sans CJK JP", "DejaVu Sans"]
COLOURS = ["#9ecae1", "#2171b5", "#fdae6b", "#d94801", "#a1d99b", "#238b45"]
# Stacked layers: distinct hues (Okabe-Ito, colour-blind safe), grey last for "other"/"idle".
STACK_COLOURS = ["#56b4e9", "#d55e00", "#e69f00", "#f0e442", "#009e73", "#cc79a7", "#999999"]
STACK_LABEL_MIN = 6  # segments smaller than this (in the chart's unit) carry no number


def _find_cjk_font() -> None:
    """matplotlib caches the list of fonts per user: a cache written before fonts-noto-cjk
    was installed (`make system`) would draw every Japanese label as an empty box."""
    if FONTS[0] not in {f.name for f in font_manager.fontManager.ttflist}:
        for path in font_manager.findSystemFonts():
            if "NotoSansCJK" in Path(path).name:
                font_manager.fontManager.addfont(path)


_find_cjk_font()


def _ink(colour: str) -> str:
    """Black or white text, whichever reads better on the segment's colour."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white"


def render(chart: Chart, lang: str, out: Path) -> Path:
    """Draw a grouped bar chart (or lines, or stacked bars) with labelled values; write a PNG."""
    with plt.rc_context({"font.family": FONTS, "font.size": 11}):
        fig, ax = plt.subplots(figsize=(9, 5.2), dpi=130)
        labels = [c(lang) for c in chart.categories]
        n = len(chart.series)
        width = 0.8 / max(n, 1)
        bottom = [0.0] * len(labels)
        for i, series in enumerate(chart.series):
            values = [float("nan") if v is None else v for v in series.values]
            if chart.kind == "line" and series.reference:
                ax.plot(range(len(labels)), values, linestyle="--", linewidth=1.2,
                        label=series.label(lang))
                continue
            if chart.kind == "line":
                ax.errorbar(range(len(labels)), values, yerr=_errors(series), marker="o",
                            capsize=3, label=series.label(lang))
                continue
            if chart.kind == "stacked":
                colour = STACK_COLOURS[i % len(STACK_COLOURS)]
                bars = ax.bar(range(len(labels)), values, 0.7, bottom=bottom, color=colour,
                              label=series.label(lang), edgecolor="white", linewidth=0.5)
                ax.bar_label(bars, label_type="center", fontsize=7, color=_ink(colour),
                             labels=[f"{v:.0f}" if v >= STACK_LABEL_MIN else "" for v in values])
                bottom = [b + (v if v == v else 0) for b, v in zip(bottom, values)]
                continue
            xs = [x + (i - (n - 1) / 2) * width for x in range(len(labels))]
            bars = ax.bar(xs, values, width, label=series.label(lang),
                          color=COLOURS[i % len(COLOURS)], yerr=_errors(series), capsize=2,
                          error_kw={"elinewidth": 0.8, "ecolor": "#333"})
            ax.bar_label(bars, labels=[Number(v).format(lang) if v == v else ""
                                       for v in values], fontsize=8, padding=2)
        if chart.kind == "line":
            ax.set_xticks(range(len(labels)), labels)
            ax.set_ylim(bottom=0)
        else:
            many = len(labels) > 8
            ax.set_xticks(range(len(labels)), [_wrap(label) for label in labels],
                          rotation=60 if many else 0, ha="right" if many else "center",
                          fontsize=8 if many else None)
            ax.axhline(0, color="#444", linewidth=0.8)
        ax.set_ylabel(chart.y_label(lang))
        if chart.x_label:
            ax.set_xlabel(chart.x_label(lang))
        ax.grid(axis="y", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(fontsize=9, frameon=False, ncols=min(n, 4 if chart.kind == "stacked" else 3),
                  loc="lower center",
                  bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png", facecolor="white")
        plt.close(fig)
    write_atomically(out, png.getvalue())
    return out


def _errors(series: Series) -> list[list[float]] | None:
    """Error bars from a series' confidence intervals (none where it has none)."""
    if series.low is None or series.high is None:
        return None
    return [[v - lo if None not in (v, lo) else 0 for v, lo in zip(series.values, series.low)],
            [hi - v if None not in (v, hi) else 0 for v, hi in zip(series.values, series.high)]]


def _wrap(label: str, width: int = 18) -> str:
    """Break long category labels: after Japanese commas, then at spaces."""
    parts = label.replace("、", "、\n").split("\n")
    return "\n".join(textwrap.fill(part, width) for part in parts)


def alt_text(chart: Chart, lang: str) -> str:
    """The chart's data in words, for readers who cannot see the image."""
    parts = []
    for series in chart.series:
        values = ", ".join(f"{c(lang)} {Number(v).format(lang)}"
                           for c, v in zip(chart.categories, series.values))
        parts.append(f"{series.label(lang)}: {values}")
    return f"{chart.title(lang)} ({chart.y_label(lang)}). " + "; ".join(parts)
