"""The spellings of addresses a fetch on a person's behalf must not reach, and a real HTTP server
process on this machine that records every request it is sent, so a test can say that a refused
fetch asked nothing (the fetch policy: runners/benchhub_runner/transport/urlpolicy.py)."""

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchhub.testing.processes import free_port

# Each as it stands in a URL's host. Loopback in every IPv6 spelling (plain, IPv4-compatible,
# IPv4-mapped, NAT64, 6to4), the C library's decimal and octal IPv4 forms, private, link-local
# (the cloud metadata address) and unique-local ranges, and the localhost name.
PRIVATE_SPELLINGS = [
    "127.0.0.1",
    "[::1]",
    "[::127.0.0.1]",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::1]",
    "2130706433",
    "0177.0.0.1",
    "10.0.0.1",
    "169.254.169.254",
    "[fc00::1]",
    "[fe80::1]",
    "localhost",
]


# An HTTP server on [::] (dual stack, so ::1 and ::ffff:127.0.0.1 reach it too) that logs each
# connection as it is accepted, before reading a byte: git:// speaks no HTTP but is logged too.
_SERVER = """
import socket, sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
    def verify_request(self, request, client_address):
        with open(sys.argv[2], "a") as log:
            log.write(f"connection from {client_address[0]}\\n")
        return True
class Handler(SimpleHTTPRequestHandler):
    timeout = 5
    def log_message(self, *args):
        pass
Server(("::", int(sys.argv[1])), Handler).serve_forever()
"""


@dataclass(frozen=True)
class RecordingServer:
    """A server process listening on every local address (IPv4 and IPv6) at `port`."""

    port: int
    log: Path

    def requests(self) -> list[str]:
        """One line per connection it accepted (the readiness probe's aside)."""
        return self.log.read_text().splitlines()


@contextlib.contextmanager
def recording_server(tmp: Path) -> Iterator[RecordingServer]:
    """The server above, answering HTTP from `tmp`, its connections logged in a file."""
    port = free_port()
    log = tmp / "connections.log"
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(port), str(log)], cwd=tmp,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_listening(server, port, log)
        log.write_text("")
        yield RecordingServer(port=port, log=log)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _wait_listening(server: subprocess.Popen, port: int, log: Path) -> None:
    """Until the server logged a probe's connection (then the log is cleared of it)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("::1", port), timeout=1).close()
            while not (log.exists() and log.read_text()):
                if time.monotonic() > deadline:
                    raise RuntimeError("the recording server logged no connection")
                time.sleep(0.05)
            return
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the recording server did not start") from None
            time.sleep(0.1)
