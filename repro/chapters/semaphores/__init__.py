"""Chapter: 004 §4 (scale-up, PostgreSQL 9.6.6 against 10.1 on 32 cores): TPS against
clients for the read and update scripts, the semaphore system calls behind the WAL-flush
lock, and the control the authors proposed (one source built with System V and with
unnamed POSIX semaphores)."""
from ...chapter import Chapter
from ...text import Text
from .analysis import summarize
from .findings import FINDINGS
from .page import CHARTS, TABLES, numbers

CHAPTER = Chapter(
    title=Text("スケールアップと 9.6 → 10 のセマフォ", "Scale-up and the semaphores of 9.6 and 10"),
    summarize=summarize,
    findings=FINDINGS,
    tables=TABLES,
    charts=CHARTS,
    numbers=numbers,
)
