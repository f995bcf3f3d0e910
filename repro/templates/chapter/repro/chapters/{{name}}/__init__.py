"""Chapter: {{name}} (replace with what it reproduces, from which publication).

The registry builds the chapter from this package by convention: analysis.summarize,
findings.FINDINGS, page.TABLES, page.CHARTS, page.numbers; here only its title and short
name, and, where the chapter has them, REQUIRES (what the whole chapter needs, e.g.
[feature("pg_wait_sampling")] or [majors(11)] from repro.requirements) and MACHINE_BOUND
(a Text: why its values depend on the machine itself; docs/contributing.md)."""
from ...text import Text

TITLE = Text("{{name}} (日本語の題)", "{{name}} (English title)")
SHORT = Text("{{name}}", "{{name}}")  # where a list names many chapters
