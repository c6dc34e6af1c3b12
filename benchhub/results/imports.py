"""Importing history: pasted or uploaded pgbench outputs, and published tables of numbers.

Both build the same upload an agent sends and store it through `run_submit`, so an imported run
obeys every rule of the upload contract. Outputs are parsed by the agent package's parser
(benchhub_runner.parse), the one parser both sides share; it reads outputs as they are pasted
(indented, quoted, joined, cut). A published table has no raw output: its runs are stored with
source "summary" and the pages say so. Every imported run keeps the text it came from
(RunImportText, in a monthly partition that retention drops like the raw outputs) and who
imported it (`submitted_by`).

Where the text lacks what a run needs, the import asks instead of refusing: ImportIncomplete
(400, code `incomplete`) names each missing field and carries what was read, so the page or the
API client can ask for exactly those fields and send again with them.
"""

import datetime as dt
import re
import uuid
from collections.abc import Sequence
from typing import Any

from benchhub_runner.parse import runs_split
from benchhub_runner.results.importer import ImportIncomplete as OutputsIncomplete
from benchhub_runner.results.importer import ImportRefused, config_parse, import_payload_from_texts
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from benchhub.api.errors import flatten_errors
from benchhub.errors import ApplicationError
from benchhub.results import tables
from benchhub.results.models import Run
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import payload_digest, run_import_text_set, run_submit

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


class ImportIncomplete(ApplicationError):
    """The text makes a run once the caller gives the fields in `fields`; `read` (in the API's
    body beside them) is what the text said, for the caller to show or prefill."""

    def __init__(self, missing: dict[str, str], read: dict[str, Any]) -> None:
        super().__init__(
            "incomplete",
            f"The text does not say {', '.join(missing)}: give "
            f"{'it' if len(missing) == 1 else 'them'} and send again.",
        )
        self.missing = missing
        self.extra = {"read": read}

    @property
    def fields(self) -> dict[str, list[str]]:
        return {field: [why] for field, why in self.missing.items()}


def _store(payload: dict[str, Any], user: User, import_text: str) -> Run:
    upload = RunUploadSerializer(data=payload)
    try:
        upload.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise ImportInvalid(flatten_errors(exc.detail)) from None
    with transaction.atomic():
        run = run_submit(data=upload.validated_data, digest=payload_digest(payload), user=user).run
        if run.import_text != import_text:
            run_import_text_set(run=run, text=import_text)
    return run


def pasted_outputs_split(text: str) -> list[str]:
    """Outputs pasted one after another: separated by a line of three or more dashes, or each
    starting where a new run starts (benchhub_runner.parse.runs_split)."""
    return [
        run.strip("\n")
        for part in SEPARATOR.split(text)
        if part.strip()
        for run in runs_split(part)
    ]


def run_import_outputs(
    *,
    texts: list[tuple[str, str]],
    version: str,
    host: str,
    config_text: str,
    lscpu: str,
    user: User,
    clients: Sequence[int | None] = (),
    workload: str = "",
    note: str = "",
) -> Run:
    """One run from pgbench outputs given as (name, text); levels come from the outputs.

    `version` (else the outputs' banner), `clients` (per output, by index from 0, for outputs
    that do not say theirs) and `workload` (a builtin's name or one's own, for outputs that say
    neither their transaction type nor their statements) complete what the text lacks;
    ImportIncomplete names what is still missing (`version`, `workload`, `outputs[i].clients`)
    with what was read. The run keeps the texts as given (joined by `---` lines); one
    transaction; nothing is stored on a refusal.
    """
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
            clients=clients,
            workload=workload,
        )
    except OutputsIncomplete as exc:
        raise ImportIncomplete(exc.missing, exc.read) from None
    except ImportRefused as exc:
        raise ImportInvalid({"outputs": [str(exc)]}) from None
    payload["notes"] = note
    return _store(payload, user, "\n---\n".join(text for _, text in texts))


def summary_rows(
    table: tables.Table, *, clients_column: int | str | None, filter_value: str
) -> tables.Table:
    """The rows to import: those whose label column (a model, a workload) holds `filter_value`;
    every row when the table gives each client level once. ImportIncomplete (field `filter`,
    with the column and its values under `read.filter`) when a table mixing several was given
    no value."""
    clients = (
        tables.column_index(table, clients_column, field="clients_column")
        if clients_column is not None
        else tables.columns_guess(table)[0]
    )
    label = tables.label_column(table, clients)
    if label is None:
        if filter_value.strip():
            raise tables.TableInvalid("The table has no column of labels to choose from.", "filter")
        return table
    values = tables.column_values(table, label)
    if filter_value.strip():
        return tables.rows_with(table, label, filter_value, field="filter")
    clients, versions = tables.columns_guess(
        tables.rows_with(table, label, values[0], field="filter")
    )
    raise ImportIncomplete(
        {"filter": f"choose one {table.headers[label]!r} to import: {', '.join(values)}"},
        {
            "headers": table.headers,
            "rows": table.rows[:10],
            "filter": {"column": label, "header": table.headers[label], "values": values},
            "guess": {
                "clients_column": clients,
                "columns": [{"column": i, "version": v} for i, v in versions],
            },
        },
    )


def summary_columns(
    table: tables.Table,
    *,
    clients_column: int | str | None,
    version_columns: Sequence[tuple[int | str, str]] | None,
) -> tables.Columns:
    """The columns to import: those chosen (by index or header; a version left empty is read
    from its header), else the ones a plain table makes itself; ImportIncomplete (fields
    `clients_column` and `columns`, with the headers, the first rows and a proposed choice)
    when a table with other columns was given no choice."""
    if clients_column is None and not version_columns:
        simple = tables.simple_columns(table)
        if simple is not None:
            return simple
        clients, versions = tables.columns_guess(table)
        raise ImportIncomplete(
            {
                "clients_column": "choose the column of client counts",
                "columns": "choose one column of tps per version, and name its version",
            },
            {
                "headers": table.headers,
                "rows": table.rows[:10],
                "guess": {
                    "clients_column": clients,
                    "columns": [{"column": i, "version": v} for i, v in versions],
                },
            },
        )
    if clients_column is None or not version_columns:
        field = "clients_column" if clients_column is None else "columns"
        raise tables.TableInvalid("Choose the clients column and at least one version.", field)
    versions = []
    for n, (reference, version) in enumerate(version_columns):
        index = tables.column_index(table, reference, field=f"columns[{n}].column")
        name = version.strip() or tables.version_of_header(table.headers[index])
        if not name:
            raise tables.TableInvalid(
                f"Name the version of column {table.headers[index]!r}.", f"columns[{n}].version"
            )
        versions.append((index, name))
    if len({name for _, name in versions}) != len(versions):
        raise tables.TableInvalid("Each version may be chosen once.", "columns")
    return tables.Columns(
        clients=tables.column_index(table, clients_column, field="clients_column"),
        versions=versions,
    )


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
    clients_column: int | str | None = None,
    version_columns: Sequence[tuple[int | str, str]] | None = None,
    filter_value: str = "",
) -> list[Run]:
    """One summary run per chosen version of a published table: tps only, no raw output.

    Columns: see `summary_columns`; rows: see `summary_rows` (`filter_value`, one value of a
    label column). All versions in one transaction, or none; each run keeps the table's text.
    """
    table = summary_rows(
        tables.table_read(table_text), clients_column=clients_column, filter_value=filter_value
    )
    columns = summary_columns(table, clients_column=clients_column, version_columns=version_columns)
    levels = tables.table_levels(table, columns)
    started = dt.datetime.now(dt.UTC).isoformat()
    base: dict[str, Any] = {
        "host": {"name": host, "facts": facts},
        "notes": note,
        "configuration": {"settings": {}},
        "workload": workload,
        "scale": scale,
        "duration_s": duration_s,
        "repeats": 1,
        "started_at": started,
        "status": "completed",
        "source": "summary",
    }
    runs = []
    with transaction.atomic():  # all versions of the table, or none
        for version, points in levels.items():
            payload = {
                **base,
                "run_uuid": str(uuid.uuid4()),
                "build": {"version": version, "origin": "unknown"},
                "clients": [c for c, _ in points],
                "results": [
                    {"clients": c, "repeat": 1, "tps": tps, "raw_output": ""} for c, tps in points
                ],
            }
            try:
                runs.append(_store(payload, user, table_text))
            except ImportInvalid as exc:
                problems = {f"{version}: {k}": v for k, v in exc.problems.items()}
                raise ImportInvalid(problems) from None
    return runs
