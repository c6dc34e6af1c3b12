"""The token never follows a redirect to another origin: two real HTTP servers on two ports,
the first redirecting to the second, which records the headers it was sent. The agent's
client and the benchhub command (which sends through it) both."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchhub_cli.api import Api
from benchhub_cli.config import Settings
from benchhub_runner.transport.client import Client

TOKEN = "bhr_secret-token"


class _Handler(BaseHTTPRequestHandler):
    """/away redirects to the server's `target` (302); anything else answers {} and records
    the path and its Authorization header."""

    def do_GET(self) -> None:
        if self.path.startswith("/away"):
            self.send_response(302)
            self.send_header("Location", self.server.target + "/landed")  # type: ignore[attr-defined]
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.seen.append((self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        body = json.dumps({}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve() -> ThreadingHTTPServer:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.seen = []  # type: ignore[attr-defined]
    httpd.target = ""  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture
def servers() -> Iterator[tuple[ThreadingHTTPServer, ThreadingHTTPServer]]:
    first, second = _serve(), _serve()
    yield first, second
    for httpd in (first, second):
        httpd.shutdown()
        httpd.server_close()


def url(httpd: ThreadingHTTPServer, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{httpd.server_address[1]}"


def send_through(kind: str, server: str) -> None:
    if kind == "agent":
        Client(server=server, token=TOKEN, attempts=1).request("GET", "/away")
    else:
        Api(Settings(server=server, token=TOKEN), attempts=1).get("/away")


@pytest.mark.parametrize("kind", ["agent", "cli"])
def test_it_keeps_the_token_from_a_redirect_to_another_origin(servers, kind):
    first, second = servers
    first.target = url(second)

    send_through(kind, url(first))

    assert second.seen == [("/landed", None)]


@pytest.mark.parametrize("kind", ["agent", "cli"])
def test_it_keeps_the_token_from_another_host_name_on_the_same_port(servers, kind):
    # Same port, another host: another origin (the address happens to be the same here).
    first, _ = servers
    first.target = url(first, host="localhost")

    send_through(kind, url(first))

    assert first.seen == [("/landed", None)]


@pytest.mark.parametrize("kind", ["agent", "cli"])
def test_it_sends_the_token_on_a_redirect_within_the_same_origin(servers, kind):
    first, _ = servers
    first.target = url(first)

    send_through(kind, url(first))

    assert first.seen == [("/landed", f"Bearer {TOKEN}")]
