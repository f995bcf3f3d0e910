"""The findings: each a statistic of the rounds against a threshold (replace); their
words (claim, the original's number, where in the source) are in findings.toml."""
from __future__ import annotations

from ...text import Text
from ...verdict import Above, Check, Measure
from ...wording import Wording
from .analysis import gain

GAIN_PCT = 10.0  # from the original's number or a natural boundary, registered (repro register) before any run

WORDS = Wording.beside(__file__)

FINDINGS = [
    WORDS.finding("F1",
                  [Check(Measure(Text("TPS の変化 (off ÷ on)", "TPS change (off over on)"), gain, "%", 1,
                                 signed=True), Above(GAIN_PCT))]),
]
