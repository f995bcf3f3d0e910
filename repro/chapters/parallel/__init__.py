"""Chapter: parallel query on TPC-DS Q10 and Q11 (004 §6), across majors."""
from ...chapter import Chapter
from ...text import Text
from .analysis import summarize
from .findings import FINDINGS
from .page import CHARTS, TABLES, numbers

CHAPTER = Chapter(
    title=Text("パラレルクエリと TPC-DS Q10・Q11", "Parallel query on TPC-DS Q10 and Q11"),
    summarize=summarize,
    findings=FINDINGS,
    tables=TABLES,
    charts=CHARTS,
    numbers=numbers,
)
