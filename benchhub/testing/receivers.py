"""Real receivers of notifications for end-to-end tests, each its own process: an SMTP server
(aiosmtpd, delivering into a Maildir) and an HTTP server that records each webhook call.

The HTTP receiver is this module run as a program (no Django):
`python -m benchhub.testing.receivers PORT LOG FAILURES` appends each POST as a JSON line
{"path", "headers", "body", "status"} to LOG and answers 503 to the first FAILURES calls, 200 after.
"""

from __future__ import annotations

import json
import mailbox
import sys
import time
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

MAX_BODY = 1_000_000


def _handler(log: Path, failures: int) -> type[BaseHTTPRequestHandler]:
    calls = {"n": 0}

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = min(int(self.headers.get("Content-Length", "0")), MAX_BODY)
            body = self.rfile.read(length)
            calls["n"] += 1
            status = 503 if calls["n"] <= failures else 200
            with log.open("a") as out:
                record = {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body.decode(),
                    "status": status,
                }
                out.write(json.dumps(record) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"receiver: {format % args}\n")

    return Receiver


def main(argv: list[str]) -> None:
    port, log, failures = int(argv[0]), Path(argv[1]), int(argv[2])
    HTTPServer(("127.0.0.1", port), _handler(log, failures)).serve_forever()


def webhook_calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_for(condition: Any, *, timeout_s: float, what: str) -> Any:
    """Poll `condition()` until it returns something truthy; fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with suppress(Exception):
            value = condition()
            if value:
                return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def maildir_messages(path: Path) -> list[Any]:
    return list(mailbox.Maildir(str(path), create=False)) if (path / "new").exists() else []


if __name__ == "__main__":
    main(sys.argv[1:])
