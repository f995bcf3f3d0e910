"""The one exception type the command line turns into a single clear line."""
import traceback


class ReproError(Exception):
    """A problem the user can act on (bad input, no engine, no image, ...)."""

    def detail(self) -> str:
        """What to print above the one line: nothing, for a problem the user can act on."""
        return ""


class ChapterStopped(ReproError):
    """A chapter's experiment stopped with an error on one major; a build of several runs
    reports it and goes on with the others."""

    def detail(self) -> str:
        """The traceback of an unexpected cause (a bug to fix), or nothing for a ReproError."""
        cause = self.__cause__
        if cause is None or isinstance(cause, ReproError):
            return ""
        return "".join(traceback.format_exception(cause))
