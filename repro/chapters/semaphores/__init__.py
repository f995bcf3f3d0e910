"""Chapter: 004 §4 (scale-up, PostgreSQL 9.6.6 against 10.1 on 32 cores): TPS against
clients for the read and update scripts, the semaphore system calls behind the WAL-flush
lock, and the control the authors proposed (one source built with System V and with
unnamed POSIX semaphores)."""
from ...text import Text

TITLE = Text("スケールアップと 9.6 → 10 のセマフォ", "Scale-up and the semaphores of 9.6 and 10")
SHORT = Text("セマフォ", "semaphores")  # where a list names many chapters
