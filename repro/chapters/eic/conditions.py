"""The conditions: effective_io_concurrency per serial run, and the parallel pair (parallel
bitmap heap scans came in 10). Shared by the experiment and the page, which imports no lab."""

SERIAL = {"eic0": 0, "eic1": 1, "eic16": 16, "eic64": 64}
PARALLEL = {"parallel_eic0": 0, "parallel_eic1": 1}
