"""Bilingual strings and typed values shared by chapters and the Sphinx extension."""
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


@dataclass(frozen=True)
class Number:
    """A measured (or original) value with its unit, formatted per language.

    `signed` shows a leading + for changes such as overheads; `digits` fixes the
    decimals (default: three significant digits, at least none after the point).
    """

    value: float | None
    unit: str = ""
    digits: int | None = None
    signed: bool = False

    def format(self, lang: str) -> str:
        if self.value is None:
            return "—"
        digits = self.digits if self.digits is not None else _auto_digits(self.value)
        text = f"{self.value:{'+' if self.signed else ''},.{digits}f}"
        if float(text.replace(",", "")) == 0:  # no "-0.0"; a signed zero reads "±0.0"
            text = ("±" if self.signed else "") + text.lstrip("+-")
        if not self.unit:
            return text
        gap = "" if self.unit == "%" and lang == "ja" else " "
        return f"{text}{gap}{self.unit}"


def _auto_digits(value: float) -> int:
    magnitude = abs(value)
    if magnitude >= 100 or magnitude == 0:
        return 0
    if magnitude >= 10:
        return 1
    if magnitude >= 1:
        return 2
    return 3
