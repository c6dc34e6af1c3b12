"""A job's workload as the agent runs it: its scripts, its streams (the pgbench processes of a
measurement) and its setup, parsed from the workload's JSON definition."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .fields import JobSpecError, JsonObject, read_text
from .plan import QUERY_MODE_DEFAULT, Combine, QueryMode, Role

# A stream's name goes into script file names and application_name: the server's name rule.
STREAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,49}$")


@dataclass(frozen=True)
class Script:
    """A pgbench script: a builtin by name, or a body; `weight` is pgbench's @weight."""

    name: str
    weight: int
    builtin: str = ""
    body: str = ""


@dataclass(frozen=True)
class Stream:
    """One pgbench process of a measurement (or, `per_client`, one per client of the level).

    `clients` None means the level's; `threads` None means the job's threads policy.
    """

    name: str
    role: Role
    builtin: str
    scripts: tuple[Script, ...]
    clients: int | None
    threads: int | None
    per_client: bool
    rows_per_transaction: int | None

    @property
    def measured(self) -> bool:
        return self.role == "measured"

    def level_clients(self, level: int) -> int:
        """Connections this stream opens at a client level."""
        return self.clients if self.clients is not None else level

    def processes(self, level: int) -> int:
        return self.level_clients(level) if self.per_client else 1


@dataclass(frozen=True)
class Workload:
    """The workload of a job. `streams` are as the job gave them (empty: the workload's own
    builtin and scripts are one measured stream, see streams.workload_streams).

    `definition` is the JSON object as the server sent it: the upload sends it back unchanged,
    since the server identifies a workload by a hash of its definition.
    """

    name: str
    builtin: str
    scripts: tuple[Script, ...]
    setup: tuple[str, ...]
    level_setup: tuple[str, ...]
    query_mode: QueryMode
    options: tuple[str, ...]
    progress_s: int
    streams: tuple[Stream, ...]
    combine: Combine
    definition: dict[str, Any] = field(compare=False, repr=False)


def workload_parse(definition: object, *, path: str = "workload") -> Workload:
    """A workload definition (as in a job or an upload); raises JobSpecError."""
    return workload_read(JsonObject(definition, path))


def workload_read(workload: JsonObject) -> Workload:
    streams = tuple(_stream(JsonObject(value, p)) for p, value in workload.items("streams"))
    scripts = tuple(_script(JsonObject(value, p)) for p, value in workload.items("scripts"))
    builtin = workload.text("builtin", default="")
    if streams and not any(stream.measured for stream in streams):
        raise JobSpecError(workload.at("streams"), "no stream is measured")
    if not streams and not builtin and not scripts:
        raise JobSpecError(workload.at("builtin"), "give a builtin, scripts or streams")
    return Workload(
        name=workload.text("name"),
        builtin=builtin,
        scripts=scripts,
        setup=tuple(read_text(value, path) for path, value in workload.items("setup")),
        level_setup=tuple(read_text(value, path) for path, value in workload.items("level_setup")),
        query_mode=workload.choice("query_mode", tuple(QueryMode), default=QUERY_MODE_DEFAULT),
        options=tuple(read_text(value, path) for path, value in workload.items("options")),
        progress_s=workload.integer("progress_s", default=1),
        streams=streams,
        combine=workload.choice("combine", tuple(Combine), default=Combine.SUM),
        definition=dict(workload.value),
    )


def _stream(stream: JsonObject) -> Stream:
    scripts = tuple(_script(JsonObject(value, p)) for p, value in stream.items("scripts"))
    builtin = stream.text("builtin", default="")
    if not builtin and not scripts:
        raise JobSpecError(stream.at("builtin"), "give the stream a builtin or scripts")
    name = stream.text("name")
    if not STREAM_NAME.match(name):
        raise JobSpecError(
            stream.at("name"),
            "use 1 to 50 letters, digits and . _ : @ -, starting with one of the first two",
        )
    return Stream(
        name=name,
        role=stream.choice("role", tuple(Role), default=Role.MEASURED),
        builtin=builtin,
        scripts=scripts,
        clients=stream.optional_integer("clients"),
        threads=stream.optional_integer("threads"),
        per_client=stream.boolean("per_client", default=False),
        rows_per_transaction=stream.optional_integer("rows_per_transaction"),
    )


def _script(script: JsonObject) -> Script:
    builtin, body = script.text("builtin", default=""), script.text("body", default="")
    if not builtin and not body:
        raise JobSpecError(script.path, "a script needs a builtin or a body")
    return Script(
        name=script.text("name", default=""),
        weight=script.integer("weight", default=1, minimum=0),
        builtin=builtin,
        body=body,
    )
