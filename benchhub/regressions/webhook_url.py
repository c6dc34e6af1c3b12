"""One reading of a webhook URL, for the check at entry, the address check and the call alike.

A webhook URL is text a person typed that the server calls. Two parsers may read one text two
ways (`http://127.0.0.1\\@hooks.example.com/` is `hooks.example.com` to one, `127.0.0.1` to
another), so the URL is read once, strictly: `http` or `https`, `://`, a host name of letters,
digits, dots and hyphens or a bracketed IPv6 address, an optional port, and a path and query of
the characters RFC 3986 allows. Anything else, backslashes, credentials (`user@`), spaces,
fragments, percent-escapes in the host, non-ASCII, is refused: a URL two parsers could read
differently is not accepted at all. The call then connects to the address the check resolved
(`webhook_resolve`), never resolving the name a second time, and only when every address it
has passes the fetch policy every fetch made on a person's behalf follows
(benchhub_runner.transport.urlpolicy; docs/security.md, "What a fetch may reach").
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from benchhub_runner.transport.urlpolicy import address_resolve

__all__ = ["OPT_IN", "WebhookURL", "webhook_resolve", "webhook_url_parse"]

OPT_IN = "BENCHHUB_WEBHOOK_ALLOW_PRIVATE"

_URL = re.compile(
    r"(?P<scheme>[Hh][Tt][Tt][Pp][Ss]?)://"
    r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
    r"(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<target>[/?][A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?",
    re.ASCII,
)
_DEFAULT_PORT = {"http": 80, "https": 443}


@dataclass(frozen=True)
class WebhookURL:
    """A webhook URL as the server reads it: `host` without brackets, `target` the request
    target sent on the wire ("/" when the URL has no path)."""

    scheme: str
    host: str
    port: int
    target: str

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORT[self.scheme] else f"{host}:{self.port}"


def webhook_url_parse(url: str) -> WebhookURL:
    """The one reading of `url`; raises ValueError saying what is not allowed."""
    if "\\" in url:
        raise ValueError("A webhook URL holds no backslash.")
    match = _URL.fullmatch(url)
    if match is None:
        if "@" in _authority(url):
            raise ValueError("A webhook URL carries no credentials.")
        raise ValueError(
            "A webhook URL is http:// or https://, a host name or [IPv6 address], an optional "
            "port, and a path of plain URL characters (no spaces, fragment or credentials)."
        )
    host = match["host"].lower().strip("[]")
    if ":" in match["host"]:
        try:
            host = str(ipaddress.IPv6Address(host))
        except ValueError:
            raise ValueError("The webhook URL's IPv6 address is not valid.") from None
    port_text = match["port"]
    scheme = match["scheme"].lower()
    port = int(port_text) if port_text else _DEFAULT_PORT[scheme]
    if not 0 < port < 65536:
        raise ValueError("The webhook URL's port is not valid.")
    target = match["target"] or "/"
    if target.startswith("?"):
        target = "/" + target
    return WebhookURL(scheme=scheme, host=host, port=port, target=target)


def _authority(url: str) -> str:
    rest = url.partition("://")[2]
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


def webhook_resolve(parsed: WebhookURL, *, allow_private: bool) -> str:
    """The address to connect to: the host's first address, after every address it resolves
    to passed the fetch policy (unless `allow_private`). Raises LookupError when the name does
    not resolve, PermissionError (urlpolicy.AddressRefused) naming the address refused."""
    return address_resolve(parsed.host, parsed.port, allow_private=allow_private, opt_in=OPT_IN)
