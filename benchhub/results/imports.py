"""Importing history: pasted or uploaded pgbench outputs, and published tables of numbers.

Both build the same upload an agent sends and store it through `run_submit`, so an imported run
obeys every rule of the upload contract. Outputs are parsed by the agent package's parser
(benchhub_runner.parse), the one parser both sides share. A published table has no raw output:
its runs are stored with source "summary" and the pages say so.
"""

import datetime as dt
import re
import uuid
from dataclasses import dataclass
from typing import Any

from benchhub_runner.importer import ImportRefused, config_parse, import_payload_from_texts
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from benchhub.api.errors import flatten_errors
from benchhub.errors import ApplicationError
from benchhub.results.models import Run
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import payload_digest, run_submit

SEPARATOR = re.compile(r"^-{3,}\s*$", re.MULTILINE)


class ImportInvalid(ApplicationError):
    """The input does not make a run; `fields` maps each field at fault (or "") to messages."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        super().__init__(
            "invalid",
            "; ".join(f"{k}: {' '.join(v)}" if k else " ".join(v) for k, v in problems.items()),
        )
        self.problems = problems

    @property
    def fields(self) -> dict[str, list[str]]:
        return self.problems


def _store(payload: dict[str, Any], user: User) -> Run:
    upload = RunUploadSerializer(data=payload)
    try:
        upload.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise ImportInvalid(flatten_errors(exc.detail)) from None
    return run_submit(data=upload.validated_data, digest=payload_digest(payload), user=user).run


def pasted_outputs_split(text: str) -> list[str]:
    """Outputs pasted one after another, separated by a line of three or more dashes."""
    return [part.strip("\n") for part in SEPARATOR.split(text) if part.strip()]


def run_import_outputs(
    *,
    texts: list[tuple[str, str]],
    version: str,
    host: str,
    config_text: str,
    lscpu: str,
    user: User,
) -> Run:
    """One run from pgbench outputs given as (name, text); levels come from the outputs."""
    now = timezone.now()
    try:
        payload = import_payload_from_texts(
            texts=texts,
            version=version,
            host=host,
            settings=config_parse(config_text),
            lscpu=lscpu,
            started_at=now,
            finished_at=now,
        )
    except ImportRefused as exc:
        raise ImportInvalid({"outputs": [str(exc)]}) from None
    return _store(payload, user)


@dataclass(frozen=True)
class SummaryTable:
    versions: list[str]
    rows: list[tuple[int, list[float | None]]]


def summary_table_parse(text: str) -> SummaryTable:
    """A published table: a header `clients <version> <version> ...`, then one row per client
    level with one tps per version (`-` or empty for none). Spaces, tabs or commas separate."""
    lines = [re.split(r"[\s,;|]+", line.strip()) for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or len(lines[0]) < 2:
        raise ImportInvalid(
            {
                "table": [
                    "Give a header line (clients and one column per version) and at least one row."
                ]
            }
        )
    versions = lines[0][1:]
    rows = []
    for number, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(lines[0]):
            raise ImportInvalid(
                {
                    "table": [
                        f"Line {number} has {len(cells)} columns; the header has {len(lines[0])}."
                    ]
                }
            )
        try:
            clients = int(cells[0])
            values = [None if c in ("-", "") else float(c) for c in cells[1:]]
        except ValueError:
            raise ImportInvalid(
                {"table": [f"Line {number} is not numbers: {' '.join(cells)}"]}
            ) from None
        rows.append((clients, values))
    return SummaryTable(versions=versions, rows=rows)


def runs_import_summary(
    *,
    table_text: str,
    host: str,
    facts: dict[str, Any],
    workload: dict[str, Any],
    scale: int | None,
    duration_s: float | None,
    note: str,
    user: User,
) -> list[Run]:
    """One summary run per version of a published table: tps only, no raw output."""
    table = summary_table_parse(table_text)
    started = dt.datetime.now(dt.UTC).isoformat()
    runs = []
    with transaction.atomic():  # all versions of the table, or none
        for column, version in enumerate(table.versions):
            runs.append(
                _summary_run(
                    table,
                    column,
                    version,
                    host=host,
                    facts=facts,
                    workload=workload,
                    scale=scale,
                    duration_s=duration_s,
                    note=note,
                    started=started,
                    user=user,
                )
            )
    return runs


def _summary_run(
    table: SummaryTable,
    column: int,
    version: str,
    *,
    host: str,
    facts: dict[str, Any],
    workload: dict[str, Any],
    scale: int | None,
    duration_s: float | None,
    note: str,
    started: str,
    user: User,
) -> Run:
    levels = [
        (clients, values[column]) for clients, values in table.rows if values[column] is not None
    ]
    payload: dict[str, Any] = {
        "run_uuid": str(uuid.uuid4()),
        "host": {"name": host, "facts": facts},
        "notes": note,
        "build": {"version": version, "origin": "unknown"},
        "configuration": {"settings": {}},
        "workload": workload,
        "scale": scale,
        "duration_s": duration_s,
        "clients": [c for c, _ in levels],
        "repeats": 1,
        "started_at": started,
        "status": "completed",
        "source": "summary",
        "results": [{"clients": c, "repeat": 1, "tps": tps, "raw_output": ""} for c, tps in levels],
    }
    try:
        return _store(payload, user)
    except ImportInvalid as exc:
        raise ImportInvalid({f"{version}: {k}": v for k, v in exc.problems.items()}) from None
