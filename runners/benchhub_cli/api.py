"""The REST API as the command uses it: the agent's retrying client
(benchhub_runner.transport.client), whose redirects carry the token to the same origin only, with
the token optional (reads are open to anonymous users) and the server's refusals turned into
one-line errors that name the field, the scope or the URL."""

from __future__ import annotations

import json
import urllib.request
from typing import Any
from urllib.parse import urlencode

from benchhub_cli.config import Settings
from benchhub_cli.errors import CliError
from benchhub_runner.transport.client import ApiError, Client, Response, Unreachable, opener


class _Client(Client):
    """The agent's client; without a token it sends no Authorization header at all, as an
    anonymous reader does (an empty bearer token is no token)."""

    def _send(self, method: str, path: str, data: bytes | None) -> Response:
        if self.token:
            return super()._send(method, path, data)
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked in __init__
            f"{self.server}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        with opener.open(request, timeout=self.timeout_s) as response:
            raw = response.read()
            return Response(status=response.status, body=json.loads(raw) if raw else None)


class Refused(CliError):
    """The server refused the request (a 4xx); `fields` maps each field it named to why."""

    def __init__(self, message: str, *, http_status: int, fields: dict[str, list[str]]) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.fields = fields


class ServerAway(CliError):
    """The server could not be reached (or kept failing) through every attempt."""


class Api:
    """Calls to one server; every failure is a CliError (status 2) saying what to fix."""

    def __init__(self, settings: Settings, *, attempts: int = 5, backoff_s: float = 1.0) -> None:
        try:
            self.client = _Client(
                server=settings.server, token=settings.token, attempts=attempts,
                backoff_s=backoff_s, backoff_max_s=10.0,
            )  # fmt: skip
        except ValueError as exc:
            raise CliError(f"server: {exc}") from None
        self.server = self.client.server

    def get(self, path: str, **params: Any) -> Any:
        query = urlencode({k: v for k, v in params.items() if v is not None})
        return self.call("GET", f"{path}?{query}" if query else path)

    def call(self, method: str, path: str, body: Any = None, *, attempts: int | None = None) -> Any:
        try:
            return self.client.request(method, path, body, attempts=attempts).body
        except Unreachable as exc:
            raise ServerAway(f"cannot reach the server {self.server}: {exc}") from None
        except ApiError as exc:
            raise Refused(
                refusal_text(exc.status, exc.body),
                http_status=exc.status,
                fields=field_errors(exc.body),
            ) from None

    def page_url(self, path: str) -> str:
        return f"{self.server}{path}"


def refusal_text(status: int, body: dict[str, Any]) -> str:
    """The server's error in one line: its detail, then each field it names with the reason."""
    detail = str(body.get("detail") or body.get("error") or f"HTTP {status}")
    if status == 401:
        detail = f"the server refused the token: {detail} (run benchhub login again)"
    fields = field_errors(body)
    if fields:
        named = "; ".join(f"{name}: {' '.join(why)}" for name, why in fields.items())
        # The detail often repeats the only field's reason; say it once.
        said = any(detail in why for why in fields.values())
        return named if said else f"{detail} {named}"
    return detail


def field_errors(body: dict[str, Any]) -> dict[str, list[str]]:
    fields = body.get("fields")
    return (
        {str(k): [str(v) for v in why] for k, why in fields.items()}
        if isinstance(fields, dict)
        else {}
    )
