"""Historical pgbench outputs as one run: the payload `benchhub-runner import` uploads.

Each file is one pgbench execution. Its client level comes from the output itself; several
files at one level are that level's repeats, in the order given. What must be the same for the
files to form one run (workload, scale, query mode, duration or transaction count) is checked,
and a file that disagrees is named; a file that does not say (a `tail` fragment, a cut header)
agrees with any. The run is marked `source: import`.

Pasted outputs may lack what a run needs: an output's number of clients, the server version (no
banner), the workload (no `transaction type:` line and no per-statement lines). Then
:class:`ImportIncomplete` names every missing field at once, with what the outputs did say, so
that the caller can ask for exactly those and call again with them (`clients`, `version`,
`workload`). What the caller gives only fills what the outputs lack, except `version`: the
server version the caller names wins over a banner, which may name only the client.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..host.sysinfo import cpu_facts_from_lscpu
from ..parse import PgbenchParseError, parse_run_output
from .payload import result_payload, run_status

BUILTINS = {
    "select only": "select-only",
    "TPC-B (sort of)": "tpcb-like",
    "simple update": "simple-update",
}
_CONF_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=?\s*(.*?)\s*$")


class ImportRefused(Exception):
    """The files do not make one run; the message names the file and the problem."""


class ImportIncomplete(ImportRefused):
    """The outputs make a run once the caller gives the `missing` fields (path -> why).

    Paths: `version`, `workload`, `outputs[i].clients` (i counts the outputs from 0). `read` is
    what the outputs said: `version` and `workload` as read (or None), and per output its name,
    clients, threads, duration_s, scale, transaction_type and tps.
    """

    def __init__(self, missing: dict[str, str], read: dict[str, Any]) -> None:
        super().__init__("; ".join(f"{field}: {why}" for field, why in missing.items()))
        self.missing = missing
        self.read = read


@dataclass
class Output:
    path: str  # a file's path, or the name of a pasted text
    parsed: dict[str, Any]
    text: str


def outputs_parse(texts: list[tuple[str, str]], clients: Sequence[int | None] = ()) -> list[Output]:
    """Parse (name, text) pairs; ImportRefused names the first that is not pgbench output.

    `clients[i]` is the number of clients of output i where the output does not say it; an
    output that still lacks it keeps `clients` None (see :func:`missing_fields`).
    """
    outputs = []
    for index, (name, text) in enumerate(texts):
        try:
            parsed = parse_run_output(text).to_dict()
        except PgbenchParseError as exc:
            raise ImportRefused(f"{name}: {exc}") from exc
        given = clients[index] if index < len(clients) else None
        if not parsed.get("clients") and given:
            parsed["clients"] = given
        outputs.append(Output(path=name, parsed=parsed, text=text))
    if not outputs:
        raise ImportRefused("no outputs to import")
    return outputs


_VERSION_READ = re.compile(r"^\d+(?:\.\d+)*(?:(?:alpha|beta|rc)\d+|devel)?")


def version_read(outputs: list[Output]) -> str | None:
    """The server version the outputs' banners name (`pgbench (14.1, server 13.3)` -> 13.3,
    `pgbench (15.20 (Debian ...))` -> 15.20), or None when no output has a banner."""
    for output in outputs:
        banner = output.parsed.get("server_version") or output.parsed.get("pgbench_version")
        if banner and (match := _VERSION_READ.match(banner)):
            return match.group(0)
    return None


def outputs_read(outputs: list[Output]) -> list[dict[str, Any]]:
    """What each output says, for a caller that must ask for what it does not."""
    keys = ("clients", "threads", "duration_s", "scaling_factor", "transaction_type", "tps")
    return [{"name": o.path, **{key: o.parsed.get(key) for key in keys}} for o in outputs]


def missing_fields(outputs: list[Output], version: str | None, workload: Any) -> dict[str, str]:
    """Path -> why, for every field the run needs that neither the outputs nor the caller give."""
    missing = {
        f"outputs[{index}].clients": f"{output.path} does not say its number of clients"
        for index, output in enumerate(outputs)
        if not output.parsed.get("clients")
    }
    if not version:
        missing["version"] = "no output has a version banner ('pgbench (X)'); name the version"
    if workload is None:
        missing["workload"] = (
            "no output says its transaction type or statements; name the workload "
            f"({', '.join(sorted(BUILTINS.values()))}, or a name of your own)"
        )
    return missing


def texts_read(paths: list[Path]) -> list[tuple[str, str]]:
    texts = []
    for path in paths:
        try:
            texts.append((str(path), path.read_bytes().decode("utf-8", errors="replace")))
        except OSError as exc:
            raise ImportRefused(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return texts


def _same(outputs: list[Output], key: str) -> Any:
    """The one value the outputs give for `key`; an output that does not say agrees with any."""
    saying = [output for output in outputs if output.parsed.get(key) is not None]
    if not saying:
        return None
    first = saying[0].parsed[key]
    for output in saying[1:]:
        if output.parsed[key] != first:
            raise ImportRefused(
                f"{output.path}: {key} is {output.parsed[key]!r}, but {saying[0].path} "
                f"has {first!r}; one run holds one workload, scale and duration"
            )
    return first


def workload_named(name: str, mode: str = "simple") -> dict[str, Any]:
    """The workload a person names: a builtin by its name, or a script of their own whose
    statements were not recorded."""
    if name in BUILTINS.values():
        return {"name": name, "builtin": name, "query_mode": mode}
    slug = re.sub(r"[^A-Za-z0-9._:@-]+", "-", name).strip("-") or "imported"
    body = "-- not recorded: named by the person who imported the output"
    return {
        "name": slug,
        "scripts": [{"name": name, "weight": 1, "body": body}],
        "query_mode": mode,
    }


def workload_from(outputs: list[Output], named: str = "") -> dict[str, Any] | None:
    """The workload as pgbench described it: a builtin by name, or the commands of `-r`; when
    the outputs say neither, the one `named`, else None."""
    kind = _same(outputs, "transaction_type") or ""
    mode = _same(outputs, "query_mode") or "simple"
    commands = [s["command"] for o in outputs[:1] for s in o.parsed.get("statements", [])]
    if not kind and not commands:
        return workload_named(named, mode) if named else None
    builtin = re.fullmatch(r"<builtin: (.+)>", kind)
    if builtin and builtin.group(1) in BUILTINS:
        name = BUILTINS[builtin.group(1)]
        return {"name": name, "builtin": name, "query_mode": mode}
    body = "\n".join(commands) or f"-- not recorded: imported output said {kind!r}"
    name = re.sub(r"[^A-Za-z0-9._:@-]+", "-", Path(kind).stem or "imported").strip("-")
    return {
        "name": name or "imported",
        "scripts": [{"name": kind or name, "weight": 1, "body": body}],
        "query_mode": mode,
    }


def config_parse(text: str) -> dict[str, str]:
    """name -> value of a postgresql.conf's text (comments, quotes and includes aside)."""
    settings: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0]
        match = _CONF_LINE.match(line)
        if not match or not match.group(2) or match.group(1).startswith("include"):
            continue
        settings[match.group(1).lower()] = match.group(2).strip("'")
    return settings


def import_payload(
    *,
    paths: list[Path],
    version: str,
    host: str,
    config: Path | None = None,
    lscpu: Path | None = None,
    clients: int | None = None,
    workload: str = "",
) -> dict[str, Any]:
    """The upload of one run made of these files (docs/runner-api.md); times from the files.
    `clients` is the level of every file that does not say its own."""
    mtimes = [dt.datetime.fromtimestamp(p.stat().st_mtime, dt.UTC) for p in paths if p.exists()]
    now = dt.datetime.now(dt.UTC)
    return import_payload_from_texts(
        texts=texts_read(paths),
        version=version,
        host=host,
        settings=config_parse(config.read_text(errors="replace")) if config else {},
        lscpu=lscpu.read_text(errors="replace") if lscpu else "",
        started_at=min(mtimes, default=now),
        finished_at=max(mtimes, default=now),
        clients=[clients] * len(paths),
        workload=workload,
    )


def import_payload_from_texts(
    *,
    texts: list[tuple[str, str]],
    version: str,
    host: str,
    settings: dict[str, str],
    lscpu: str,
    started_at: dt.datetime,
    finished_at: dt.datetime,
    clients: Sequence[int | None] = (),
    workload: str = "",
) -> dict[str, Any]:
    """The upload of one run made of these (name, pgbench output) pairs.

    `version` (else the banners'), `clients` (per output, by index) and `workload` fill what the
    outputs do not say; :class:`ImportIncomplete` names what is still missing.
    """
    outputs = outputs_parse(texts, clients)
    version = version or version_read(outputs) or ""
    described = workload_from(outputs, workload)
    missing = missing_fields(outputs, version, described)
    if missing or described is None:
        read = {
            "version": version_read(outputs),
            "workload": _same(outputs, "transaction_type"),
            "outputs": outputs_read(outputs),
        }
        raise ImportIncomplete(missing, read)
    repeat_of: Counter[int] = Counter()
    results = []
    for output in outputs:
        level: int = output.parsed["clients"]
        repeat_of[level] += 1
        results.append(
            result_payload(
                parsed=output.parsed,
                clients=level,
                repeat=repeat_of[level],
                threads=output.parsed.get("threads") or level,
                raw_output=output.text,
                telemetry=[],
                client_bound=None,
            )
        )
    return {
        "run_uuid": str(uuid.uuid4()),
        "host": {
            "name": host,
            "facts": cpu_facts_from_lscpu(lscpu) if lscpu.strip() else {},
            "lscpu": lscpu,
        },
        "build": {"version": version, "origin": "unknown"},
        "configuration": {"settings": settings},
        "workload": described,
        "scale": _same(outputs, "scaling_factor"),
        "clients": sorted(repeat_of),
        "duration_s": _float(_same(outputs, "duration_s")),
        "transactions_per_client": _same(outputs, "transactions_per_client"),
        "repeats": max(repeat_of.values()),
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "status": run_status(results),
        "source": "import",
        "pgbench_version": _same_or_empty(outputs, "pgbench_version"),
        "server_version": _same_or_empty(outputs, "server_version"),
        "results": sorted(results, key=lambda r: (r["clients"], r["repeat"])),
    }


def _same_or_empty(outputs: list[Output], key: str) -> str:
    return next((str(o.parsed[key]) for o in outputs if o.parsed.get(key)), "")


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None
