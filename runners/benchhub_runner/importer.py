"""Historical pgbench outputs as one run: the payload `benchhub-runner import` uploads.

Each file is one pgbench execution. Its client level comes from the output itself; several
files at one level are that level's repeats, in the order given. What must be the same for the
files to form one run (workload, scale, query mode, duration or transaction count) is checked,
and a file that disagrees is named. The run is marked `source: import`.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .parse import PgbenchParseError, parse_run_output
from .payload import result_payload, run_status
from .sysinfo import cpu_facts_from_lscpu

BUILTINS = {
    "select only": "select-only",
    "TPC-B (sort of)": "tpcb-like",
    "simple update": "simple-update",
}
_CONF_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=?\s*(.*?)\s*$")


class ImportRefused(Exception):
    """The files do not make one run; the message names the file and the problem."""


@dataclass
class Output:
    path: str  # a file's path, or the name of a pasted text
    parsed: dict[str, Any]
    text: str


def outputs_parse(texts: list[tuple[str, str]]) -> list[Output]:
    """Parse (name, text) pairs; ImportRefused names the first that is not pgbench output."""
    outputs = []
    for name, text in texts:
        try:
            parsed = parse_run_output(text).to_dict()
        except PgbenchParseError as exc:
            raise ImportRefused(f"{name}: {exc}") from exc
        if not parsed.get("clients"):
            raise ImportRefused(f"{name}: the output does not say its number of clients")
        outputs.append(Output(path=name, parsed=parsed, text=text))
    if not outputs:
        raise ImportRefused("no outputs to import")
    return outputs


def texts_read(paths: list[Path]) -> list[tuple[str, str]]:
    texts = []
    for path in paths:
        try:
            texts.append((str(path), path.read_bytes().decode("utf-8", errors="replace")))
        except OSError as exc:
            raise ImportRefused(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return texts


def _same(outputs: list[Output], key: str) -> Any:
    first = outputs[0].parsed.get(key)
    for output in outputs[1:]:
        if output.parsed.get(key) != first:
            raise ImportRefused(
                f"{output.path}: {key} is {output.parsed.get(key)!r}, but {outputs[0].path} "
                f"has {first!r}; one run holds one workload, scale and duration"
            )
    return first


def workload_from(outputs: list[Output]) -> dict[str, Any]:
    """The workload as pgbench described it: a builtin by name, or the commands of `-r`."""
    kind = _same(outputs, "transaction_type") or ""
    mode = _same(outputs, "query_mode") or "simple"
    builtin = re.fullmatch(r"<builtin: (.+)>", kind)
    if builtin and builtin.group(1) in BUILTINS:
        name = BUILTINS[builtin.group(1)]
        return {"name": name, "builtin": name, "query_mode": mode}
    commands = [s["command"] for s in outputs[0].parsed.get("statements", [])]
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
) -> dict[str, Any]:
    """The upload of one run made of these files (docs/runner-api.md); times from the files."""
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
) -> dict[str, Any]:
    """The upload of one run made of these (name, pgbench output) pairs."""
    outputs = outputs_parse(texts)
    workload = workload_from(outputs)
    repeat_of: Counter[int] = Counter()
    results = []
    for output in outputs:
        clients = output.parsed["clients"]
        repeat_of[clients] += 1
        results.append(
            result_payload(
                parsed=output.parsed,
                clients=clients,
                repeat=repeat_of[clients],
                threads=output.parsed.get("threads") or clients,
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
        "workload": workload,
        "scale": _same(outputs, "scaling_factor"),
        "clients": sorted(repeat_of),
        "duration_s": _float(_same(outputs, "duration_s")),
        "transactions_per_client": _same(outputs, "transactions_per_client"),
        "repeats": max(repeat_of.values()),
        "started_at": started_at.isoformat(),
        "finished_at": finished_at.isoformat(),
        "status": run_status(results),
        "source": "import",
        "pgbench_version": outputs[0].parsed.get("pgbench_version") or "",
        "server_version": outputs[0].parsed.get("server_version") or "",
        "results": sorted(results, key=lambda r: (r["clients"], r["repeat"])),
    }


def _float(value: Any) -> float | None:
    return float(value) if value is not None else None
