"""How a job ends early: a failure at a stage, which the server shows, or an interruption."""

from __future__ import annotations

from typing import Any

# What a failure message may hold (the server keeps 20000 characters): the head names the build
# stage, the tail is the end of the build log (a rejected hunk, a compiler error).
MESSAGE_HEAD, MESSAGE_TAIL = 2000, 16000


class StageError(Exception):
    """The job failed at `stage`; the message is for the person who queued it. `payloads` are
    the partial runs of a sweep that failed midway (empty before the sweep began)."""

    def __init__(self, stage: str, message: str) -> None:
        self.stage = stage
        self.payloads: list[dict[str, Any]] = []
        super().__init__(message)


class Interrupted(Exception):
    """The job was cancelled, its lease was lost, or the agent is stopping."""


def failure_message(text: str) -> str:
    """`text` cut to fit the server's limit, keeping its start and its end."""
    if len(text) <= MESSAGE_HEAD + MESSAGE_TAIL:
        return text
    return f"{text[:MESSAGE_HEAD]}\n[...]\n{text[-MESSAGE_TAIL:]}"
