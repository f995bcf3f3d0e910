"""One module per chapter; each defines CHAPTER (see repro.chapter)."""
