"""The spool: finished runs wait here, on disk, until the server has them, and it never jams.

A run is written to the spool before its first upload attempt, so neither a dead network nor a
dead agent loses it; `flush` sends what is there, oldest first, and removes a file only after the
server answered 200 or 201. Uploads are idempotent on the run UUID, so a run sent twice (the
server stored it but the answer was lost) is stored once.

No run may block the ones behind it. What the server answers decides:
- 2xx: delivered, the file is removed;
- unreachable, 502/503/504 (the server or its proxy is away), 401 and a 403 that is not about
  the run (the token was revoked or lacks a right): nothing is wrong with the run; it and the
  ones behind it wait for the next flush;
- 500 and other 5xx: the server failed on this run. The failure is counted beside it
  (`<uuid>.tries`); later runs go on; after `max_tries` failures it is set aside;
- any other 4xx (400 invalid, 409 stale job attempt or conflict, 403 forbidden_host/
  forbidden_source, 413 too large): the server refuses this run for good; it is set aside at once.

A run set aside moves to `rejected/` with the server's answer beside it (`<uuid>.error.json`),
for a person to look at: the agent never deletes a result. `benchhub-runner spool` lists them and
`--retry` puts one back; the agent reports the list to the server (`POST /api/v1/hosts/spool/`),
which shows it on the host's page.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .client import ApiError, Client, Unreachable

logger = logging.getLogger(__name__)

# Answers that say nothing about the run itself: the server or the way to it is away.
AWAY_STATUS = frozenset({408, 429, 502, 503, 504})
# 403 codes that are about the run (it names another host, or claims a source it may not).
RUN_FORBIDDEN = frozenset({"forbidden_host", "forbidden_source"})
DEFAULT_MAX_TRIES = 5


@dataclass
class FlushReport:
    sent: list[str]
    rejected: list[str]
    waiting: list[str]


@dataclass(frozen=True)
class SetAside:
    """A run the spool set aside, with the server's answer."""

    run_uuid: str
    status: int | None
    error: str
    detail: str
    tries: int
    set_aside_at: str
    body: Any

    def to_report(self) -> dict[str, Any]:
        """Its entry in the report to the server (bounded: the server stores it)."""
        return {
            "run_uuid": self.run_uuid,
            "status": self.status,
            "error": self.error[:100],
            "detail": self.detail[:1000],
            "tries": self.tries,
            "set_aside_at": self.set_aside_at,
        }


class Spool:
    def __init__(self, directory: Path, *, max_tries: int = DEFAULT_MAX_TRIES) -> None:
        self.directory = directory
        self.rejected_dir = directory / "rejected"
        self.max_tries = max(1, max_tries)

    def private(self) -> None:
        """Make the spool the agent's alone, before any job runs: a spool directory left open
        to others (by an older agent, by hand, by a umask) would let job code, which runs as
        another account, read the spooled and set-aside runs and the server's answers."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o700)

    def put(self, payload: dict[str, Any]) -> Path:
        """Write the run durably (write, fsync, rename) and return its file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o700)  # results and their host facts are the agent's alone
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
        """Send every spooled run; stops at the first sign that the server is away."""
        report = FlushReport(sent=[], rejected=[], waiting=[])
        files = self.pending()
        for index, path in enumerate(files):
            try:
                client.upload(json.loads(path.read_text()), attempts=attempts)
            except ApiError as exc:
                if _about_the_caller(exc):
                    logger.error("the server refused the agent's upload: %s", exc)
                    report.waiting = [p.stem for p in files[index:]]
                    break
                self._set_aside(path, status=exc.status, body=exc.body)
                report.rejected.append(path.stem)
                continue
            except Unreachable as exc:
                if exc.status is None or exc.status in AWAY_STATUS:
                    report.waiting = [p.stem for p in files[index:]]
                    break
                if self._count_failure(path, exc) >= self.max_tries:
                    self._set_aside(path, status=exc.status, body=exc.body)
                    report.rejected.append(path.stem)
                else:
                    report.waiting.append(path.stem)
                continue
            path.unlink()
            self._tries_path(path).unlink(missing_ok=True)
            report.sent.append(path.stem)
        return report

    # --- what was set aside ---------------------------------------------------------------------

    def set_aside(self) -> list[SetAside]:
        """The runs set aside, oldest first."""
        if not self.rejected_dir.is_dir():
            return []
        found = []
        for path in sorted(self.rejected_dir.glob("*.error.json"), key=lambda p: p.name):
            try:
                answer = json.loads(path.read_text())
            except (OSError, ValueError):
                answer = {}
            body = answer.get("body")
            info = body if isinstance(body, dict) else {}
            found.append(
                SetAside(
                    run_uuid=path.name.removesuffix(".error.json"),
                    status=answer.get("status"),
                    error=str(info.get("error") or ""),
                    detail=_detail(info),
                    tries=int(answer.get("tries") or 1),
                    set_aside_at=str(answer.get("set_aside_at") or ""),
                    body=body,
                )
            )
        return sorted(found, key=lambda s: (s.set_aside_at, s.run_uuid))

    def retry(self, run_uuid: str) -> bool:
        """Put a set-aside run back in the queue (after the server was fixed); False if none."""
        kept = self.rejected_dir / f"{run_uuid}.json"
        if not kept.is_file():
            return False
        os.replace(kept, self.directory / kept.name)
        (self.rejected_dir / f"{run_uuid}.error.json").unlink(missing_ok=True)
        self._tries_path(self.directory / kept.name).unlink(missing_ok=True)
        return True

    # --- internals ------------------------------------------------------------------------------

    def _tries_path(self, path: Path) -> Path:
        return path.with_suffix(".tries")

    def _count_failure(self, path: Path, error: Unreachable) -> int:
        tries_path = self._tries_path(path)
        try:
            tries = int(json.loads(tries_path.read_text()).get("tries", 0))
        except (OSError, ValueError, AttributeError):
            tries = 0
        tries += 1
        tries_path.write_text(json.dumps({"tries": tries, "status": error.status}))
        logger.warning(
            "server failed on run %s (%s), try %d of %d", path.stem, error, tries, self.max_tries
        )
        return tries

    def _set_aside(self, path: Path, *, status: int | None, body: Any) -> None:
        self.rejected_dir.mkdir(parents=True, exist_ok=True)
        tries_path = self._tries_path(path)
        try:
            tries = int(json.loads(tries_path.read_text()).get("tries", 1))
        except (OSError, ValueError, AttributeError):
            tries = 1
        os.replace(path, self.rejected_dir / path.name)
        tries_path.unlink(missing_ok=True)
        answer = {
            "status": status,
            "body": body,
            "tries": tries,
            "set_aside_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        (self.rejected_dir / f"{path.stem}.error.json").write_text(json.dumps(answer, indent=2))
        logger.error(
            "run %s set aside (server answered %s); kept in %s",
            path.stem,
            status,
            self.rejected_dir,
        )


def _about_the_caller(error: ApiError) -> bool:
    """Whether a refusal is about the agent (its token) rather than the run."""
    if error.status == 401:
        return True
    return error.status == 403 and error.body.get("error") not in RUN_FORBIDDEN


def _detail(info: dict[str, Any]) -> str:
    detail = str(info.get("detail") or "")
    fields = info.get("fields")
    if isinstance(fields, dict) and fields:
        named = "; ".join(
            f"{name}: {' '.join(map(str, msgs)) if isinstance(msgs, list) else msgs}"
            for name, msgs in fields.items()
        )
        detail = f"{detail} {named}".strip()
    return detail
