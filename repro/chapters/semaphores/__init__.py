"""Chapter: 004 §4 (scale-up, PostgreSQL 9.6.6 against 10.1 on 32 cores): TPS against
clients for the read and update scripts, the semaphore system calls behind the WAL-flush
lock, and the control the authors proposed (one source built with System V and with
unnamed POSIX semaphores)."""
from ... import majors
from ...text import Text
from .conditions import CONTROL, REFERENCE_MAJOR

TITLE = Text("スケールアップと 9.6 → 10 のセマフォ", "Scale-up and the semaphores of 9.6 and 10")
SHORT = Text("セマフォ", "semaphores")  # where a list names many chapters
# 9.6 (the original's older major) and the control's two builds of 15 (images/semaphores)
BESIDE = (majors.image(REFERENCE_MAJOR), *(f"repro-semaphores:{kind}" for kind in CONTROL))
