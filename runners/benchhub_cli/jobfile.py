"""A job or a schedule kept as a file (TOML or JSON) in the user's repository, checked before it
is sent: the fields are the API's (POST /api/v1/jobs/, or /api/v1/schedules/ when the file has
a `crontab`), taken from the server's own OpenAPI schema so this module never re-spells them.
Every error names the file, the field and, where the text shows it, the line."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchhub_cli.errors import CliError


@dataclass(frozen=True)
class JobFile:
    path: Path
    text: str
    data: dict[str, Any]

    @property
    def is_schedule(self) -> bool:
        return "crontab" in self.data

    @property
    def endpoint(self) -> str:
        return "/api/v1/schedules/" if self.is_schedule else "/api/v1/jobs/"

    def error(self, field: str, why: str) -> CliError:
        """A CliError naming this file, the field, and the field's line when it can be found."""
        line = field_line(self.text, field, toml=self.path.suffix == ".toml")
        where = f"{self.path}:{line}" if line else str(self.path)
        return CliError(f"{where}: {field}: {why}")


def jobfile_read(path: Path) -> JobFile:
    """Parse a .toml or .json file into the request body; a syntax error names its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"{path}: cannot read: {exc}") from None
    if path.suffix == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CliError(f"{path}: not valid TOML: {exc}") from None
    elif path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    else:
        raise CliError(f"{path}: a job file ends in .toml or .json")
    if not isinstance(data, dict):
        raise CliError(f"{path}: the file must hold one object (a job or a schedule)")
    return JobFile(path=path, text=text, data=data)


def request_schema(schema: dict[str, Any], endpoint: str) -> dict[str, Any]:
    """The request body's schema of POST `endpoint` in the server's OpenAPI document."""
    operation = schema.get("paths", {}).get(endpoint, {}).get("post", {})
    content = operation.get("requestBody", {}).get("content", {})
    body = content.get("application/json", {}).get("schema")
    if not isinstance(body, dict):
        raise CliError(f"the server's schema has no request body for POST {endpoint}")
    return body


def unknown_fields(
    value: Any, node: dict[str, Any], schema: dict[str, Any], at: str = ""
) -> list[str]:
    """Paths of the keys of `value` its schema `node` does not define (recursing into objects
    and lists); an object whose schema allows any key (a map) is not looked into."""
    node = _resolve(node, schema)
    if isinstance(value, list) and "items" in node:
        return [
            p
            for i, item in enumerate(value)
            for p in unknown_fields(item, node["items"], schema, f"{at}[{i}]")
        ]
    if not isinstance(value, dict):
        return []
    choices = [_resolve(n, schema) for n in node.get("oneOf") or node.get("anyOf") or [node]]
    known: dict[str, Any] = {}
    for choice in choices:
        if "additionalProperties" in choice or "properties" not in choice:
            return []
        known.update(choice["properties"])
    found: list[str] = []
    for key, item in value.items():
        path = f"{at}.{key}" if at else key
        found += unknown_fields(item, known[key], schema, path) if key in known else [path]
    return found


def _resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = schema.get("components", {}).get("schemas", {}).get(name, {})
    if "allOf" in node and len(node["allOf"]) == 1:
        return _resolve(node["allOf"][0], schema)
    return node


def field_line(text: str, field: str, *, toml: bool) -> int | None:
    """The line (from 1) where `field` (a path such as `workload.options` or `clients[2]`) is
    written: in TOML the whole dotted key first (`workload.options = ...`); else each part's
    key searched for after the line of the part before it, giving the line of the deepest part
    found (a field the text does not show is placed at its table). None when not even the
    first part is written."""
    lines = text.splitlines()
    keys = [part for part in re.findall(r"[^.\[\]]+", field) if not part.isdigit()]
    if toml and len(keys) > 1:
        dotted = r"\s*\.\s*".join(f'"?{re.escape(key)}"?' for key in keys)
        for number, line in enumerate(lines):
            if re.match(rf"^\s*{dotted}\s*=", line):
                return number + 1
    start, found = 0, None
    for part in keys:
        key = re.escape(part)
        pattern = (
            rf'^\s*(\[+\s*([\w.-]+\.)?"?{key}"?\s*\]+|"?{key}"?\s*=|([\w-]+\.)+"?{key}"?\s*=)'
            if toml
            else rf'"{key}"\s*:'
        )
        for number in range(start, len(lines)):
            if re.search(pattern, lines[number]):
                start, found = number, number + 1
                break
        else:
            return found
    return found
