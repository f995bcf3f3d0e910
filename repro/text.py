"""Bilingual strings and typed values shared by chapters, the judge and the site."""
from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = ("ja", "en")


@dataclass(frozen=True)
class Text:
    """A label in both languages (condition names, finding claims, axis titles)."""

    ja: str
    en: str

    def __call__(self, lang: str) -> str:
        return self.en if lang == "en" else self.ja

    def as_dict(self) -> dict[str, str]:
        return {"ja": self.ja, "en": self.en}

    def format(self, **values: object) -> Text:
        return Text(self.ja.format(**values), self.en.format(**values))

    @staticmethod
    def join(parts: list[Text], ja: str = "、", en: str = "; ") -> Text:
        return Text(ja.join(p.ja for p in parts), en.join(p.en for p in parts))


@dataclass(frozen=True)
class Number:
    """A measured (or original) value with its unit, formatted per language, and, when it
    was measured over rounds, its confidence interval (`low`, `high`).

    `signed` shows a leading + for changes such as overheads; `digits` fixes the
    decimals (default: three significant digits, at least none after the point).
    """

    value: float | None
    unit: str = ""
    digits: int | None = None
    signed: bool = False
    low: float | None = None
    high: float | None = None
    runs: int | None = None  # the runs a pooled estimate is over (None: one run's own rounds)

    def format(self, lang: str, interval: bool = True) -> str:
        if self.value is None:
            return "—"
        digits = self.digits if self.digits is not None else _auto_digits(self.value)
        text = self._plain(self.value, digits)
        if interval and self.low is not None and self.high is not None:
            text += f" [{self._plain(self.low, digits)}, {self._plain(self.high, digits)}]"
        if not self.unit:
            return text
        gap = "" if self.unit == "%" and lang == "ja" else "\u00a0"  # no break before the unit
        return f"{text}{gap}{self.unit}"

    def _plain(self, value: float, digits: int) -> str:
        text = f"{value:{'+' if self.signed else ''},.{digits}f}"
        if float(text.replace(",", "")) == 0:  # no "-0.0"; a signed zero reads "±0.0"
            text = ("±" if self.signed else "") + text.lstrip("+-")
        return text

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if v is not None and v is not False}


def _auto_digits(value: float) -> int:
    magnitude = abs(value)
    if magnitude >= 100 or magnitude == 0:
        return 0
    if magnitude >= 10:
        return 1
    if magnitude >= 1:
        return 2
    return 3


def clients(n: int) -> Text:
    """"8 clients" in both languages (pgbench -c)."""
    return Text(f"{n} クライアント", f"{n} client{'s' if n > 1 else ''}")
