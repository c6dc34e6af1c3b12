"""`benchhub apply`: make the server's schedules match the schedule files of a directory.

A file's schedule is the one of its `name`. Schedules written by apply carry the name of their
file set (`file_set`, `--set`, default the directory's name), which is how `--prune` knows
which ones came from files: it deletes only schedules of this set whose file is gone, never one
made by hand (page, API, `benchhub submit`: an empty set) nor one of another set."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchhub_cli.api import Api, Refused
from benchhub_cli.errors import CliError
from benchhub_cli.jobfile import JobFile, jobfile_read, request_schema, unknown_fields

ENDPOINT = "/api/v1/schedules/"


@dataclass(frozen=True)
class Step:
    """One change: `create` or `change` a file's schedule (with `body`, the request to send),
    or `delete` a schedule of the set whose file is gone."""

    action: str
    name: str
    file: JobFile | None = None
    body: dict[str, Any] = field(default_factory=dict)
    differences: tuple[str, ...] = ()
    schedule_id: int | None = None

    def line(self) -> str:
        what = f"{self.action} {self.name}"
        if self.differences:
            what += ": " + ", ".join(self.differences)
        return f"{what} ({self.file.path})" if self.file else what


@dataclass(frozen=True)
class Plan:
    steps: list[Step]
    unchanged: list[str]
    unpruned: list[str]  # schedules of the set without a file, left because --prune was not given


def schedule_files(directory: Path) -> list[JobFile]:
    """The schedule files (a `crontab` field) directly in `directory`, by path; a job file
    there is skipped with a note; two files of one name are a usage error naming both."""
    if not directory.is_dir():
        raise CliError(f"{directory}: not a directory")
    files: list[JobFile] = []
    names: dict[str, Path] = {}
    paths = sorted(p for p in directory.iterdir() if p.suffix in (".toml", ".json"))
    for path in paths:
        jobfile = jobfile_read(path)
        if not jobfile.is_schedule:
            print(f"benchhub: {path}: skipped: a job, not a schedule (no crontab)", file=sys.stderr)
            continue
        name = jobfile.data.get("name")
        if not isinstance(name, str) or not name:
            raise jobfile.error("name", "a schedule file names its schedule")
        if "file_set" in jobfile.data:
            raise jobfile.error("file_set", "set by benchhub apply (--set), not by the file")
        if name in names:
            raise CliError(f"{path}: name: {name!r} is also the name in {names[name]}")
        names[name] = path
        files.append(jobfile)
    return files


def apply_plan(
    *, files: list[JobFile], schedules: list[dict[str, Any]], file_set: str, prune: bool
) -> Plan:
    """What to send to make `schedules` (as GET /api/v1/schedules/ lists them) match `files`.
    A file without `enabled` leaves a schedule's pause as it is on the server (a new one
    starts enabled), so pausing on the page survives the next apply."""
    by_name = {s["name"]: s for s in schedules}
    steps, unchanged = [], []
    for jobfile in files:
        current = by_name.get(jobfile.data["name"])
        body = _body(jobfile.data, current, file_set)
        if current is None:
            steps.append(Step("create", body["name"], jobfile, body))
            continue
        differences = _differences(body, current)
        if differences:
            steps.append(Step("change", body["name"], jobfile, body, differences, current["id"]))
        else:
            unchanged.append(body["name"])
    named = {f.data["name"] for f in files}
    gone = [s for s in schedules if s.get("file_set") == file_set and s["name"] not in named]
    if prune:
        steps += [Step("delete", s["name"], schedule_id=s["id"]) for s in gone]
    return Plan(
        steps=steps, unchanged=unchanged, unpruned=[] if prune else [s["name"] for s in gone]
    )


def _body(data: dict[str, Any], current: dict[str, Any] | None, file_set: str) -> dict[str, Any]:
    enabled = data.get("enabled", current["enabled"] if current else True)
    return {**data, "enabled": enabled, "file_set": file_set}


def _differences(body: dict[str, Any], current: dict[str, Any]) -> tuple[str, ...]:
    found = [k for k in ("crontab", "enabled", "file_set") if body[k] != current.get(k)]
    template, now = body.get("template") or {}, current.get("template") or {}
    found += [
        f"template.{k}" for k in sorted(set(template) | set(now)) if template.get(k) != now.get(k)
    ]
    return tuple(found)


def schema_check(api: Api, files: list[JobFile]) -> None:
    """Refuse (naming file, line and field) any field the schedule API does not define."""
    schema = api.call("GET", "/api/schema/?format=json")
    body = request_schema(schema, ENDPOINT)
    for jobfile in files:
        unknown = unknown_fields(jobfile.data, body, schema)
        if unknown:
            raise jobfile.error(unknown[0], "unknown field (the API's fields: docs/runner-api.md)")


def step_run(api: Api, step: Step) -> None:
    """Send one step; a refused file's schedule names the file, line and field."""
    if step.action == "delete":
        api.call("DELETE", f"{ENDPOINT}{step.schedule_id}/")
        return
    try:
        api.call("POST", ENDPOINT, step.body)
    except Refused as exc:
        if exc.fields and step.file is not None:
            name, why = next(iter(exc.fields.items()))
            raise step.file.error(name, " ".join(why)) from None
        raise
