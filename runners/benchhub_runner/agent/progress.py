"""The agent's terminal progress: a one-line bar on a terminal, log lines otherwise."""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

logger = logging.getLogger(__name__)
WIDTH = 24


class ProgressView:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last_step: tuple[Any, ...] = ()

    def show(self, progress: dict[str, Any]) -> None:
        step, steps = progress.get("step"), progress.get("steps")
        what = progress.get("stage", "")
        if self.tty:
            done = int(WIDTH * step / steps) if step and steps else 0
            bar = "#" * done + "." * (WIDTH - done)
            tail = (progress.get("line") or "")[:60]
            counter = f"{step}/{steps} " if step and steps else ""
            self.stream.write(f"\r[{bar}] {counter}{what}  {tail}\x1b[K")
            self.stream.flush()
            return
        key = (what, step)
        if key != self._last_step:
            self._last_step = key
            counter = f"[{step}/{steps}] " if step and steps else ""
            logger.info("%s%s", counter, what)

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
