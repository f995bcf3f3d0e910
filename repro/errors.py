"""The one exception type the command line turns into a single clear line."""


class ReproError(Exception):
    """A problem the user can act on (bad input, no engine, no image, ...)."""
