"""The fetch policy: which addresses a fetch made on a person's behalf may reach, checked on the
addresses themselves, then through a real HTTP server on 127.0.0.1 that must never be asked
unless the opt-in says so."""

from __future__ import annotations

import ipaddress
import threading
import urllib.error
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from benchhub.testing.spellings import PRIVATE_SPELLINGS, recording_server

from benchhub_runner.config import ConfigError, config_load
from benchhub_runner.transport.urlpolicy import (
    AddressRefused,
    address_refusal,
    address_resolve,
    host_refusal,
    pinned_open,
)

OPT_IN = "[build] allow_private_sources"

REFUSED = [
    "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "0.0.0.0",  # noqa: S104 - an address refused, not one bound
    "224.0.0.1", "239.1.2.3", "240.0.0.1", "255.255.255.255",
    "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12::1", "fec0::1", "ff02::1",
    # The IPv6 spellings of refused IPv4 addresses: mapped, compatible, NAT64, 6to4.
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1", "::a9fe:a9fe", "64:ff9b::7f00:1",
    "64:ff9b::a00:1", "2002:7f00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::",
    # Local-use NAT64 and Teredo, whole.
    "64:ff9b:1::1", "64:ff9b:1:2::7f00:1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
]  # fmt: skip
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
          "2002:808:808::1", "2a00:1450:4001:82a::200e"]  # fmt: skip


@pytest.mark.parametrize("text", REFUSED)
def test_it_refuses_addresses_that_are_not_public_in_every_spelling(text):
    assert address_refusal(ipaddress.ip_address(text)) is not None, text


@pytest.mark.parametrize("text", PUBLIC)
def test_it_lets_public_addresses_through_in_every_spelling(text):
    assert address_refusal(ipaddress.ip_address(text)) is None, text


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.1", "0x7f000001", "2130706433", "0", "[::1]", "[::127.0.0.1]",
     "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[::ffff:7f00:1]", "localhost", "LOCALHOST.",
     "db.localhost", "169.254.169.254"],
)  # fmt: skip
def test_it_refuses_a_host_it_can_tell_without_a_lookup(host):
    assert host_refusal(host) is not None, host


@pytest.mark.parametrize("host", ["git.postgresql.org", "8.8.8.8", "[2606:4700:4700::1111]"])
def test_it_leaves_names_and_public_literals_to_the_fetch(host):
    assert host_refusal(host) is None


def test_it_resolves_once_and_refuses_a_name_for_a_private_address_naming_the_opt_in():
    with pytest.raises(AddressRefused) as refused:
        address_resolve("localhost", 80, allow_private=False, opt_in=OPT_IN)
    assert "localhost (" in str(refused.value) and OPT_IN in str(refused.value)
    assert address_resolve("127.0.0.1", 80, allow_private=True, opt_in=OPT_IN) == "127.0.0.1"
    with pytest.raises(LookupError):
        address_resolve("no-such-host.invalid", 80, allow_private=True, opt_in=OPT_IN)


class _Recorder(BaseHTTPRequestHandler):
    """Answers GET /file with a body, /away with a redirect to `location`; records each path."""

    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", self.server.location)  # type: ignore[attr-defined]
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    httpd.seen = []  # type: ignore[attr-defined]
    httpd.location = ""  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def fetch(url: str, *, allow_private: bool) -> bytes:
    with pinned_open(url, timeout=5, allow_private=allow_private, opt_in=OPT_IN,
                     headers={"User-Agent": "test"}) as response:  # fmt: skip
        return response.read()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "127.1"])
def test_it_never_connects_to_a_refused_address_unless_opted_in(server, host):
    port = server.server_address[1]
    url = f"http://{host}:{port}/file"
    with pytest.raises(urllib.error.URLError) as refused:
        fetch(url, allow_private=False)
    assert isinstance(refused.value.reason, AddressRefused)
    assert OPT_IN in str(refused.value.reason)
    assert server.seen == []
    if host != "[::ffff:127.0.0.1]":  # the server listens on IPv4 only
        assert fetch(url, allow_private=True) == b"hello"
        assert server.seen == ["/file"]


@pytest.mark.parametrize("host", PRIVATE_SPELLINGS)
def test_it_sends_no_request_to_any_spelling_of_a_private_address(tmp_path, host):
    with recording_server(tmp_path) as recorder:
        url = f"http://{host}:{recorder.port}/file"
        with pytest.raises(urllib.error.URLError) as refused:
            fetch(url, allow_private=False)
        assert isinstance(refused.value.reason, AddressRefused)
        assert recorder.requests() == []
        if host in ("127.0.0.1", "[::1]", "localhost", "2130706433", "0177.0.0.1"):
            # The same server answers a fetch the opt-in allows, and logs it.
            with pytest.raises(urllib.error.HTTPError, match="404"):
                fetch(url, allow_private=True)
            assert len(recorder.requests()) == 1


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/x"])
def test_it_follows_redirects_to_http_and_https_only(server, location):
    # Every connection, a redirect's too, goes through the same check (pinned_open's connect);
    # what no opt-in allows is a scheme urllib would otherwise hand to its file or ftp handler.
    server.location = location
    port = server.server_address[1]
    with pytest.raises(urllib.error.HTTPError, match=r"not http or https|is not allowed"):
        fetch(f"http://127.0.0.1:{port}/away", allow_private=True)
    assert server.seen == ["/away"]


def test_it_reads_the_host_owners_opt_in_from_the_build_table(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHHUB_CONFIG", raising=False)
    flags = {"server": "http://x:1", "token": "bhr_t"}
    assert config_load(overrides=flags).build.allow_private_sources is False
    config = tmp_path / "agent.toml"
    config.write_text("[build]\nallow_private_sources = true\n")
    assert config_load(path=config, overrides=flags).build.allow_private_sources is True
    config.write_text('[build]\nallow_private_sources = "yes"\n')
    with pytest.raises(ConfigError, match="allow_private_sources must be true or false"):
        config_load(path=config, overrides=flags)
