"""Webhook URLs are read one way, and the call goes to the address that was checked: against a
real HTTP receiver process on 127.0.0.1 (benchhub.testing.receivers; the `receiver` fixture is
in this package's conftest)."""

import hashlib
import hmac
import socket
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model

from benchhub.regressions.models import Delivery, Webhook
from benchhub.regressions.notifications import delivery_attempt, regression_notify
from benchhub.regressions.services import subscription_add, webhook_add
from benchhub.regressions.webhook_url import webhook_url_parse
from benchhub.testing import processes
from benchhub.testing.receivers import wait_for, webhook_calls
from benchhub.testing.spellings import PRIVATE_SPELLINGS


@pytest.fixture
def dave(db):
    user = get_user_model().objects.create_user("dave", email="")
    subscription_add(user=user)
    return user


def _deliver(regression) -> Delivery:
    regression_notify(regression_id=regression.pk)
    delivery = Delivery.objects.get(channel="webhook")
    try:
        delivery_attempt(delivery_id=delivery.pk, last=True)
    except Exception:  # noqa: BLE001, S110 (the delivery records why)
        pass
    delivery.refresh_from_db()
    return delivery


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1\\@hooks.example.com/x",
        "http://hooks.example.com\\@127.0.0.1/x",
        "http://hooks.example.com\\.127.0.0.1/x",
        "http://hooks.example.com@127.0.0.1/x",
        "http://@127.0.0.1/x",
        "http://hooks.example.com#@127.0.0.1/x",
        "http://hooks.example.com /x",
        "http://%31%32%37.0.0.1/x",
        "http://hooks.exämple.com/x",
        "http://[::1/x",
        "http://hooks.example.com:99999/x",
        "http://hooks.example.com:0/x",
        "http:/hooks.example.com/x",
        "http://hooks.example.com\t/x",
    ],
)
def test_it_refuses_a_webhook_url_two_parsers_could_read_differently(bob_client, url):
    response = bob_client.post("/api/v1/regressions/webhooks/", {"url": url}, format="json")
    assert response.status_code == 400, (url, response.json())
    assert "url" in response.json()["fields"], url
    assert not Webhook.objects.exists()


def test_it_reads_a_plain_url_into_the_request_it_sends():
    parsed = webhook_url_parse("HTTPS://Hooks.Example.com/a/b?c=1&d=%20")
    assert (parsed.scheme, parsed.host, parsed.port) == ("https", "hooks.example.com", 443)
    assert (parsed.target, parsed.host_header) == ("/a/b?c=1&d=%20", "hooks.example.com")
    v6 = webhook_url_parse("http://[::1]:8080?x")
    assert (v6.host, v6.port, v6.target, v6.host_header) == ("::1", 8080, "/?x", "[::1]:8080")


def test_it_calls_the_receiver_at_the_url_it_read(regression, dave, receiver, settings):
    settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE = True
    port, log = receiver
    webhook = webhook_add(user=dave, url=f"http://127.0.0.1:{port}/hooks/benchhub?team=db")

    delivery = _deliver(regression)

    assert (delivery.status, delivery.response_status) == ("delivered", 200), delivery.error
    (call,) = webhook_calls(log)
    assert call["path"] == "/hooks/benchhub?team=db"
    assert call["headers"]["Host"] == f"127.0.0.1:{port}"
    digest = hmac.new(webhook.secret.encode(), call["body"].encode(), hashlib.sha256).hexdigest()
    assert call["headers"]["X-BenchHub-Signature-256"] == f"sha256={digest}"


def test_it_connects_to_the_address_it_checked_without_a_second_lookup(
    regression, dave, receiver, settings, monkeypatch
):
    # A name that resolves to the receiver once and elsewhere after (DNS rebinding); no
    # rebinding resolver runs here, so the lookup itself is the stand-in.
    settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE = True
    port, log = receiver
    real, answers = socket.getaddrinfo, ["127.0.0.1", "127.0.0.2"]
    looked_up = []

    def rebinding(host, *args, **kwargs):
        if host != "hooks.example.com":
            return real(host, *args, **kwargs)
        looked_up.append(host)
        return real(answers[min(len(looked_up), 2) - 1], *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    webhook_add(user=dave, url=f"http://hooks.example.com:{port}/hook")

    delivery = _deliver(regression)

    assert delivery.status == "delivered", delivery.error
    assert looked_up == ["hooks.example.com"]
    (call,) = webhook_calls(log)
    assert call["headers"]["Host"] == f"hooks.example.com:{port}"


def test_it_refuses_at_delivery_a_stored_url_read_two_ways_and_calls_nothing(
    regression, dave, receiver
):
    # A row from before the check (or written past it): http.client and urllib read its host
    # as 127.0.0.1, a lenient check as hooks.example.com.
    port, log = receiver
    Webhook.objects.create(
        user=dave, url=f"http://hooks.example.com\\@127.0.0.1:{port}/hook", secret="s"
    )

    delivery = _deliver(regression)

    assert delivery.status == "failed" and "backslash" in delivery.error
    assert webhook_calls(log) == []


@pytest.mark.parametrize("host", PRIVATE_SPELLINGS)
def test_it_refuses_a_private_address_by_default_and_calls_nothing(
    regression, dave, receiver, host
):
    port, log = receiver
    # Stored while the operator allowed private addresses (the entry refuses it now): the call
    # checks again, in every IPv6 spelling of the loopback address.
    Webhook.objects.create(user=dave, url=f"http://{host}:{port}/hook", secret="s")

    delivery = _deliver(regression)

    assert delivery.status == "failed" and "not a public address" in delivery.error
    assert webhook_calls(log) == []


TLS_RECEIVER = """
import ssl, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(sys.argv[2], "a") as log:
            log.write(self.path + " " + self.headers["Host"] + "\\n")
        self.send_response(204)
        self.end_headers()
server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[3], sys.argv[4])
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""


@pytest.fixture
def tls_receiver(tmp_path):
    """(port, log, CA file) of a real HTTPS server process whose certificate names
    hooks.example.com only."""
    cert, key, log = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "calls"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=hooks.example.com",
         "-addext", "subjectAltName=DNS:hooks.example.com"],
        check=True, capture_output=True,
    )  # fmt: skip
    port = processes.free_port()
    argv = [sys.executable, "-c", TLS_RECEIVER, str(port), str(log), str(cert), str(key)]
    service = processes.Service(argv, env={"PATH": "/usr/bin:/bin"}, name="tls-receiver")
    service.start()
    wait_for(lambda: processes.port_answers(port), timeout_s=20, what="the TLS receiver")
    yield port, log, cert
    service.stop()


@pytest.mark.parametrize(
    ("name", "delivered"), [("hooks.example.com", True), ("evil.example.com", False)]
)
def test_it_speaks_tls_to_the_checked_address_as_the_name_in_the_url(
    regression, dave, tls_receiver, settings, monkeypatch, name, delivered
):
    # The receiver's certificate is trusted in place of a public CA's (none runs here), and
    # both names resolve to it: only the name its certificate holds gets the call.
    settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE = True
    port, log, cert = tls_receiver
    monkeypatch.setattr("certifi.where", lambda: str(cert))
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, *a, **k: real("127.0.0.1" if host == name else host, *a, **k),
    )
    webhook_add(user=dave, url=f"https://{name}:{port}/hook?x=1")

    delivery = _deliver(regression)

    if delivered:
        assert (delivery.status, delivery.response_status) == ("delivered", 204), delivery.error
        assert log.read_text() == f"/hook?x=1 {name}:{port}\n"
    else:
        assert delivery.status == "failed" and "SSLError" in delivery.error
        assert not log.exists()
