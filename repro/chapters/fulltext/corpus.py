"""Japanese video metadata in the original's jsonb shape, generated from a seed.

The original's data (Niconico video metadata, NII IDR) needs an application, so the words
come from Debian's mecab-ipadic: its dictionary CSVs list each word with a cost that MeCab
derived from corpus frequencies (lower is more common). Words are drawn by Zipf's law over
that order, so common words are common here too. Titles are a few nouns joined by particles;
descriptions are sentences of nouns, particles and verbs. The search words are planted at
fixed shares (beside their natural occurrences inside other words), so each search finds
a known order of rows at every scale.
"""
from __future__ import annotations

import csv
import itertools
import json
import random
from bisect import bisect
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

from ...errors import ReproError

IPADIC = Path("/usr/share/mecab/dic/ipadic")  # Debian package mecab-ipadic (EUC-JP CSVs)
NOUNS = ("Noun.csv", "Noun.verbal.csv", "Noun.adjv.csv", "Noun.proper.csv")
PARTICLES = ("の", "が", "を", "に", "で", "と", "は", "も")
# the original's categories are Niconico's; these are its category names of 2012
CATEGORIES = ("料理", "ゲーム", "音楽", "エンターテイメント", "アニメ", "動物", "科学", "スポーツ",
              "旅行", "政治", "歌ってみた", "演奏してみた", "踊ってみた", "VOCALOID", "ニコニコ技術部")
TITLE_SHARE, DESCRIPTION_SHARE = 0.002, 0.004  # rows a search word is planted in, per column


class Words:
    """One part of speech: words ordered by cost, drawn by Zipf's law (weight 1/rank)."""

    def __init__(self, words: list[str]):
        self.words = words
        self.cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))

    def draw(self, rng: random.Random) -> str:
        return self.words[bisect(self.cumulative, rng.random() * self.cumulative[-1])]


def _read(names: tuple[str, ...], keep: Callable[[list[str]], bool]) -> Words:
    """The words of some dictionary files that `keep` accepts, most common first."""
    rows = []
    for name in names:
        path = IPADIC / name
        if not path.exists():
            raise ReproError(f"{path} is missing: install Debian's mecab-ipadic (make system)")
        with path.open(encoding="euc_jp", newline="") as f:
            rows += [r for r in csv.reader(f) if keep(r)]
    rows.sort(key=lambda r: (int(r[3]), r[0]))  # cost, then the word: a total order
    return Words(list(dict.fromkeys(r[0] for r in rows)))


@lru_cache(maxsize=1)
def vocabulary() -> tuple[Words, Words]:
    """Nouns (general, verbal, adjectival, proper) and verbs in their dictionary form."""
    return (_read(NOUNS, lambda r: len(r[0]) > 1),
            _read(("Verb.csv",), lambda r: r[9] == "基本形" and r[5] == "自立"))


def _title(rng: random.Random, nouns: Words) -> str:
    parts = [nouns.draw(rng) for _ in range(rng.randint(2, 4))]
    text = "".join(p + rng.choice(PARTICLES) for p in parts[:-1]) + parts[-1]
    return f"【{nouns.draw(rng)}】{text}" if rng.random() < 0.3 else text


def _sentence(rng: random.Random, nouns: Words, verbs: Words) -> str:
    parts = [nouns.draw(rng) + rng.choice(PARTICLES) for _ in range(rng.randint(2, 5))]
    return "".join(parts) + verbs.draw(rng) + "。"


def _plant(rng: random.Random, text: str, words: tuple[str, ...], share: float) -> str:
    for word in words:
        if rng.random() < share:
            at = rng.randint(0, len(text))
            text = text[:at] + word + text[at:]
    return text


def records(seed: int, count: int, words: tuple[str, ...], start: int = 0) -> Iterator[str]:
    """`count` records as jsonb text, the `start`-th onwards of the seed's stream (each
    record has its own generator, so a record does not depend on how many came before)."""
    nouns, verbs = vocabulary()
    for i in range(start, start + count):
        rng = random.Random(f"{seed}:{i}")
        description = "".join(_sentence(rng, nouns, verbs) for _ in range(rng.randint(3, 8)))
        size = rng.randint(1_000_000, 200_000_000)
        watched = int(rng.paretovariate(1.2) * 100)
        yield json.dumps({
            "tags": [nouns.draw(rng) for _ in range(rng.randint(1, 5))],
            "title": _plant(rng, _title(rng, nouns), words, TITLE_SHARE),
            "length": rng.randint(10, 3600),
            "category": rng.choice(CATEGORIES),
            "size_low": size,
            "video_id": f"sm{1_000_000 + i}",
            "file_type": rng.choice(("flv", "mp4", "swf")),
            "size_high": size + rng.randint(0, size // 4),
            "watch_num": watched,
            "mylist_num": watched // rng.randint(10, 200),
            "comment_num": watched // rng.randint(2, 50),
            "description": _plant(rng, description, words, DESCRIPTION_SHARE),
            "upload_time": 1_170_000_000 + i * 60 + rng.randint(0, 59),
        }, ensure_ascii=False)
