"""The import pages: pgbench outputs as pasted or uploaded, and published tables.

Both ask instead of refusing: when the text lacks what a run needs (an output's clients, the
version, the workload), the outputs page shows inputs for exactly those fields, prefilled with
what it read; when a table has more columns than clients and tps per version, the table page
shows its columns and lets the person pick. The writes are results.imports.
"""

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from benchhub.dashboard import query
from benchhub.dashboard.forms import (
    ImportOutputsForm,
    ImportSummaryForm,
    asked_clients,
    chosen_columns,
)
from benchhub.errors import ApplicationError
from benchhub.results import imports, tables

MAX_OUTPUT_BYTES = 5 * 1024 * 1024
WORKLOADS = ["select-only", "tpcb-like", "simple-update"]


def _add_problems(form: forms.Form, problems: dict[str, list[str]]) -> None:
    for field, messages in problems.items():
        name = field.split(".")[0].split("[")[0]
        form.add_error(
            name if name in form.fields else None,
            f"{field}: {' '.join(messages)}" if name not in form.fields else " ".join(messages),
        )


def _add_error(form: forms.Form, exc: ApplicationError) -> None:
    if isinstance(exc, imports.ImportInvalid):
        _add_problems(form, exc.problems)
    else:
        form.add_error(exc.field if exc.field in form.fields else None, exc.detail)


def _read_in_words(read: dict[str, Any]) -> str:
    """What an output said, for the person completing it: `tps 51755.5, threads 2, 3 s`."""
    parts = []
    if read.get("tps") is not None:
        parts.append(f"tps {read['tps']:.1f}")
    if read.get("threads"):
        parts.append(f"threads {read['threads']}")
    if read.get("duration_s"):
        parts.append(f"{read['duration_s']} s")
    if read.get("transaction_type"):
        parts.append(read["transaction_type"])
    return ", ".join(parts) or "no figures"


def _asked(exc: imports.ImportIncomplete, data: Any) -> list[dict[str, Any]]:
    """One input per missing field, prefilled with what was read (or what was typed)."""
    read = exc.extra["read"]
    asked = []
    for field, why in exc.missing.items():
        if field == "version":
            asked.append({"name": "version", "label": "PostgreSQL version", "why": why})
        elif field == "workload":
            value = data.get("workload") or read.get("workload") or ""
            asked.append({"name": "workload", "label": "workload", "why": why, "value": value})
        else:  # outputs[i].clients
            index = int(field[len("outputs[") : field.index("]")])
            output = read["outputs"][index]
            asked.append(
                {
                    "name": f"clients_{index}",
                    "label": f"clients of {output['name']}",
                    "why": why,
                    "value": data.get(f"clients_{index}") or output.get("clients") or "",
                    "read": _read_in_words(output),
                }
            )
    return asked


@login_required
def import_outputs(request: query.SignedInRequest) -> HttpResponse:
    form = ImportOutputsForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"form": form, "asked": [], "workloads": WORKLOADS}
    if request.method == "POST" and form.is_valid():
        texts = [
            (f.name, f.read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace"))
            for f in form.cleaned_data["files"]
        ]
        texts += [
            (f"pasted output {n}", text)
            for n, text in enumerate(imports.pasted_outputs_split(form.cleaned_data["pasted"]), 1)
        ]
        try:
            run = imports.run_import_outputs(
                texts=texts,
                clients=asked_clients(request.POST, len(texts)),
                version=form.cleaned_data["version"],
                workload=request.POST.get("workload", "").strip(),
                host=form.cleaned_data["host"],
                config_text=form.cleaned_data["config"],
                lscpu=form.cleaned_data["lscpu"],
                note=form.cleaned_data["note"],
                user=request.user,
            )
        except imports.ImportIncomplete as exc:
            context["asked"] = _asked(exc, request.POST)
            if form.cleaned_data["files"]:
                # A file input cannot be refilled: its text goes to the paste box, in order.
                moved = request.POST.copy()
                moved["pasted"] = "\n---\n".join(text for _, text in texts)
                form.data = moved
                context["files_moved"] = True
        except ApplicationError as exc:
            _add_error(form, exc)
        else:
            return redirect("run", run_uuid=run.uuid)
    context["asked_names"] = [a["name"] for a in context["asked"]]
    return render(request, "dashboard/import_outputs.html", context)


def _columns(
    table: tables.Table, clients: int | None, versions: list[tuple[int | str, str]]
) -> list[dict[str, Any]]:
    """Each column of a pasted table with its first values and its pick."""
    version_of = {int(index): version for index, version in versions}
    return [
        {
            "index": index,
            "header": header,
            "samples": [row[index] for row in table.rows[:3]],
            "is_clients": index == clients,
            "version": version_of.get(index, ""),
        }
        for index, header in enumerate(table.headers)
    ]


@login_required
def import_summary(request: query.SignedInRequest) -> HttpResponse:
    form = ImportSummaryForm(request.POST or None)
    context: dict[str, Any] = {"form": form}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            table = tables.table_read(data["table"])
            clients_column, version_columns = chosen_columns(request.POST, len(table.headers))
            if version_columns is not None:
                context["columns"] = _columns(table, clients_column, version_columns)
            context["filter_value"] = request.POST.get("filter", "").strip()
            runs = imports.runs_import_summary(
                table_text=data["table"],
                clients_column=clients_column,
                version_columns=version_columns,
                filter_value=context["filter_value"],
                host=data["host"],
                facts=form.facts(),
                workload=form.workload(),
                scale=data["scale"],
                duration_s=data["duration_s"],
                note=data["note"],
                user=request.user,
            )
        except imports.ImportIncomplete as exc:
            read = exc.extra["read"]
            if "filter" in read:
                context["filter"] = read["filter"]
            if "columns" not in context:
                guess = read["guess"]
                picks = [(c["column"], c["version"]) for c in guess["columns"]]
                context["columns"] = _columns(table, guess["clients_column"], picks)
        except ApplicationError as exc:
            _add_error(form, exc)
        else:
            return redirect("run", run_uuid=runs[0].uuid)
    return render(request, "dashboard/import_summary.html", context)
