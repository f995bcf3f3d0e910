"""One package per chapter (see repro.chapter and repro.registry)."""
