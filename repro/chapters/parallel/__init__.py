"""Chapter: parallel query on TPC-DS Q10 and Q11 (004 §6), across majors."""
from ...text import Text

TITLE = Text("パラレルクエリと TPC-DS Q10・Q11", "Parallel query on TPC-DS Q10 and Q11")
SHORT = Text("パラレルクエリ", "parallel query")  # where a list names many chapters
