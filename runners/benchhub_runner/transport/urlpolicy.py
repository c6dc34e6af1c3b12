"""What a fetch made on a person's behalf may reach: public addresses only, unless opted in.

Whoever may queue a job or write a recipe names URLs that an agent (running as root) then
fetches: a tarball, a git repository; the server calls the webhooks people give it. Left to
themselves, those fetches would reach the host's own services (a database on 127.0.0.1, a
cloud's metadata at 169.254.169.254, the lab's private network) and publish what answered (a
tarball's sha256, a git error). One policy for all of them, here, standard library only so that
the agent uses it and the server imports it too:

- `address_refusal`: why an address may not be reached, or None. Refused: loopback, private,
  link-local, unspecified, multicast, reserved, shared (100.64/10) and every other address that
  is not globally reachable, and the IPv6 spellings of a refused IPv4 address (IPv4-mapped
  ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``);
  local-use NAT64 (``64:ff9b:1::/48``) and Teredo (``2001::/32``) are refused whole.
- `host_refusal`: the check that needs no lookup (a literal address as the C library reads it,
  ``127.1`` and ``0x7f000001`` included, and the ``localhost`` names), for a URL given at the
  server's edge, which does not resolve the agent's names.
- `address_resolve`: resolve a name once, check every address it has, and return the one to
  connect to, so that the connection goes where the check looked (no second lookup a DNS
  server could answer differently).
- `pinned_open`: an HTTP(S) GET whose every connection, redirects included, goes through
  `address_resolve`; no proxy (a proxy would resolve the name itself), http and https only.

The opt-in for a lab whose sources or receivers are private is the caller's setting
(``[build] allow_private_sources`` on an agent, ``BENCHHUB_SOURCES_ALLOW_PRIVATE`` and
``BENCHHUB_WEBHOOK_ALLOW_PRIVATE`` on the server); its name is given to these functions so that
a refusal says what would allow it. docs/security.md, "What a fetch may reach".
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "AddressRefused",
    "address_refusal",
    "address_resolve",
    "host_refusal",
    "pinned_open",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_LOCAL_NAMES = ("localhost", "ip6-localhost", "ip6-loopback")


class AddressRefused(PermissionError):
    """A host that is, or resolves to, an address the policy refuses; the message names the
    address, why, and the setting that would allow it."""


def address_refusal(address: Address) -> str | None:
    """Why a fetch may not connect to `address` ("loopback", "private", ...), or None."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL:
            return "a local-use NAT64 address"
        if address in _TEREDO:
            return "a Teredo tunnel address"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            why = _plain_refusal(embedded)
            return f"{why} (as {embedded})" if why else None
    return _plain_refusal(address)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    # A dual-stack socket, a 6to4 relay or a NAT64 gateway takes the packet on to the IPv4
    # address inside the IPv6 one: that address is the one to judge.
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _plain_refusal(address: Address) -> str | None:
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("not a public address", not address.is_global),
    )
    return next((name for name, hit in checks if hit), None)


def _literal(host: str) -> Address | None:
    """`host` as the C library reads a numeric address (``127.1``, ``0x7f.1``, ``[::1]``), or
    None for a name."""
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        return None
    return ipaddress.ip_address(str(infos[0][4][0]).split("%", 1)[0])


def host_refusal(host: str) -> str | None:
    """Why a URL naming `host` is refused without resolving it (a refused literal address or a
    ``localhost`` name), or None. A name that resolves to a refused address passes here; the
    fetch itself (`address_resolve`) refuses it."""
    name = host.strip("[]").lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return f"{host} is this machine (loopback)"
    address = _literal(name)
    if address is None:
        return None
    why = address_refusal(address)
    return f"{host} is {why}" if why else None


def address_resolve(host: str, port: int, *, allow_private: bool, opt_in: str) -> str:
    """The address to connect to for `host`: its first, after every address it resolves to
    passed `address_refusal` (all of them pass with `allow_private`). One lookup; connect to
    what it returns. Raises LookupError when the name does not resolve, AddressRefused naming
    the address and `opt_in` (the setting that allows it) otherwise."""
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise LookupError(f"cannot resolve {host}: {exc}") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not addresses:
        raise LookupError(f"cannot resolve {host}: no address")
    for address in addresses:
        why = None if allow_private else address_refusal(address)
        if why:
            shown = host if str(address) == name else f"{host} ({address})"
            raise AddressRefused(
                f"{shown} is {why}, not a public address: fetches on a job's or a person's "
                f"behalf reach public addresses only ({opt_in} allows private ones)"
            )
    return str(addresses[0])


# --- a pinned HTTP(S) GET --------------------------------------------------------------------


def _connector(*, allow_private: bool, opt_in: str) -> Callable[..., socket.socket]:
    """A stand-in for socket.create_connection that connects to the checked address."""

    def connect(
        address: tuple[str, int], timeout: Any = None, source_address: Any = None
    ) -> socket.socket:
        host, port = address
        try:
            pinned = address_resolve(host, port, allow_private=allow_private, opt_in=opt_in)
        except LookupError as exc:
            raise OSError(str(exc)) from exc
        return socket.create_connection((pinned, port), timeout, source_address)

    return connect


class _PinnedHTTP(urllib.request.HTTPHandler):
    def __init__(self, connect: Callable[..., socket.socket]) -> None:
        super().__init__()
        self._connect = connect

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req)

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(host, **kwargs)
        # http.client's own seam: connect() calls it with (host, port); TLS (below) then wraps
        # the socket with the name, so the certificate is checked against the name.
        conn._create_connection = self._connect  # type: ignore[attr-defined]
        return conn


class _PinnedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, connect: Callable[..., socket.socket]) -> None:
        super().__init__(context=ssl.create_default_context())
        self._connect = connect

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req, context=self._context)  # type: ignore[attr-defined]

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPSConnection:
        conn = http.client.HTTPSConnection(host, **kwargs)
        conn._create_connection = self._connect  # type: ignore[attr-defined]
        return conn


class _HTTPRedirectsOnly(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:  # fmt: skip
        if not newurl.lower().startswith(("http://", "https://")):
            raise urllib.error.HTTPError(
                req.full_url, code, f"redirect to {newurl[:200]} is not http or https", headers, fp
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


@contextlib.contextmanager
def pinned_open(
    url: str, *, timeout: float, allow_private: bool, opt_in: str, headers: dict[str, str]
) -> Iterator[http.client.HTTPResponse]:
    """GET `url` (http or https), every connection made to an address `address_resolve`
    checked, redirects followed to http and https only and checked the same way, no proxy.
    Raises urllib.error.URLError (its reason an AddressRefused when the policy refused) or
    HTTPError as urlopen does."""
    connect = _connector(allow_private=allow_private, opt_in=opt_in)
    opener = urllib.request.OpenerDirector()
    for handler in (
        _PinnedHTTP(connect),
        _PinnedHTTPS(connect),
        _HTTPRedirectsOnly(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
        urllib.request.UnknownHandler(),
    ):
        opener.add_handler(handler)
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - the handlers above
    with opener.open(request, timeout=timeout) as response:
        yield response
