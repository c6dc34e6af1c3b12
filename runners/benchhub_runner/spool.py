"""The spool: finished runs wait here, on disk, until the server has them.

A run is written to the spool before its first upload attempt, so neither a dead network nor a
dead agent loses it; `flush` sends what is there, oldest first, and removes a file only after the
server answered 200 or 201. Uploads are idempotent on the run UUID, so a run sent twice (the
server stored it but the answer was lost) is stored once. A run the server refuses for good (a
4xx: stale job attempt, invalid) moves to `rejected/` with the server's answer beside it, for a
person to look at: the agent never deletes a result.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .client import ApiError, Client, Unreachable

logger = logging.getLogger(__name__)


@dataclass
class FlushReport:
    sent: list[str]
    rejected: list[str]
    waiting: list[str]


class Spool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.rejected_dir = directory / "rejected"

    def put(self, payload: dict[str, Any]) -> Path:
        """Write the run durably (write, fsync, rename) and return its file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"{payload['run_uuid']}.json"
        temporary = final.with_suffix(".tmp")
        with open(temporary, "w") as handle:
            json.dump(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, final)
        return final

    def pending(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime)

    def flush(self, client: Client, *, attempts: int | None = None) -> FlushReport:
        """Send every spooled run; stops at the first unreachable-server failure."""
        report = FlushReport(sent=[], rejected=[], waiting=[])
        files = self.pending()
        for index, path in enumerate(files):
            try:
                client.request(
                    "POST", "/api/v1/runs/", json.loads(path.read_text()), attempts=attempts
                )
            except ApiError as exc:
                self._reject(path, exc)
                report.rejected.append(path.stem)
                continue
            except Unreachable:
                report.waiting = [p.stem for p in files[index:]]
                break
            path.unlink()
            report.sent.append(path.stem)
        return report

    def _reject(self, path: Path, error: ApiError) -> None:
        self.rejected_dir.mkdir(parents=True, exist_ok=True)
        os.replace(path, self.rejected_dir / path.name)
        (self.rejected_dir / f"{path.stem}.error.json").write_text(
            json.dumps({"status": error.status, "body": error.body}, indent=2)
        )
        logger.error(
            "server refused run %s for good (%s); kept in %s", path.stem, error, self.rejected_dir
        )
