"""The two ways a build ends without an installation: it failed at a stage, or it was stopped."""

from __future__ import annotations

from pathlib import Path

# Stages in the order a build goes through them; an error names the one it failed in.
STAGES = ("fetch", "resolve", "unpack", "patch", "configure", "make", "install")


class BuildError(Exception):
    """The build failed at ``stage``; ``log_tail`` holds the last lines of the build log.

    ``str(error)`` reads as one message for the person who asked for the build: the stage, what
    went wrong, and the log tail when there is one. ``log_path`` is the full log, when one was
    written.
    """

    def __init__(
        self, stage: str, message: str, *, log_tail: str = "", log_path: Path | None = None
    ) -> None:
        self.stage = stage
        self.reason = message
        self.log_tail = log_tail
        self.log_path = log_path
        text = f"build failed at {stage}: {message}"
        if log_tail:
            text += f"\nlast lines of the build log ({log_path}):\n{log_tail}"
        super().__init__(text)


class BuildStopped(Exception):
    """The stop event was set; the build was aborted at ``stage`` and left nothing usable.

    Not a BuildError: a stopped build says nothing about the source, so callers treat it as an
    interruption (give the job back), never as a failed build.
    """

    def __init__(self, stage: str) -> None:
        self.stage = stage
        super().__init__(f"build stopped during {stage}")
