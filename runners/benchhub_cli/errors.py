"""The exit statuses a CI job reads, and the one exception type that carries them."""

from __future__ import annotations

OK = 0  # no level slower beyond the threshold (or what --fail-on allows)
SLOWER = 1  # a level slower (or changed, with --fail-on change) after Holm's correction
USAGE = 2  # usage or input error: the message names the field, file, scope or URL
INCONCLUSIVE = 3  # levels still inconclusive after --settle spent its rounds
JOB_FAILED = 4  # the job failed: its stage and the tail of its log are printed
INTERRUPTED = 5  # Ctrl-C: the job keeps running on the server


class CliError(Exception):
    """A refusal or failure the command reports in one message and ends with `status`."""

    def __init__(self, message: str, *, status: int = USAGE) -> None:
        super().__init__(message)
        self.status = status
