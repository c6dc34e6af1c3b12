"""A comparison (the body of GET /api/v1/compare/) as a CI job reads it: the exit status its
verdicts call for, and the table for people (text), for a pull request (markdown) or for
programs (json). Verdicts are the server's, after Holm's correction (`verdict_holm`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchhub_cli import errors

FAIL_ON = ("slower", "change", "never")
FORMATS = ("text", "markdown", "json")


@dataclass(frozen=True)
class Verdict:
    """A comparison and where people see it: `permalink` is the compare page's URL."""

    body: dict[str, Any]
    permalink: str
    title: str  # "select-only on bench-01" or "runs a, b"


def exit_status(body: dict[str, Any], *, fail_on: str) -> int:
    """1 when a level of a version is slower (or, with fail_on 'change', slower or faster) than
    the baseline after Holm's correction; else 0."""
    failing = {"slower": {"slower"}, "change": {"slower", "faster"}, "never": set()}[fail_on]
    for level in _levels(body):
        if level.get("verdict_holm") in failing:
            return errors.SLOWER
    return errors.OK


def inconclusive_levels(body: dict[str, Any]) -> list[int]:
    return sorted(
        {int(v["clients"]) for v in _levels(body) if v.get("verdict_holm") == "inconclusive"}
    )


def _levels(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [level for v in body.get("verdicts") or [] for level in v.get("levels") or []]


def render(verdict: Verdict, *, fmt: str, status: int) -> str:
    if fmt == "json":
        return json.dumps(
            {"permalink": verdict.permalink, "exit_status": status, "comparison": verdict.body},
            indent=2,
        )
    if fmt == "markdown":
        return _markdown(verdict)
    return _text(verdict)


def render_error(message: str, *, fmt: str, status: int) -> str:
    """What stdout carries when there is no verdict: for markdown, a comment saying why (a
    pull request learns that its patch did not build); for json, the status and the message;
    for text nothing (the message is on stderr)."""
    if fmt == "json":
        return json.dumps({"exit_status": status, "error": message}, indent=2) + "\n"
    if fmt != "markdown":
        return ""
    headline = message.splitlines()[0]
    lines = ["### BenchHub: no verdict", "", _md(headline)]
    rest = message.splitlines()[1:]
    if rest:
        lines += ["", "```", *(line.replace("```", "` ``") for line in rest), "```"]
    return "\n".join(lines) + "\n"


def _rows(body: dict[str, Any], index: int) -> list[list[str]]:
    """Per level: clients, baseline tps, this version's tps, change, interval, verdict."""
    levels = {int(v["clients"]): v for v in body["verdicts"][index - 1]["levels"]}
    out = []
    for row in body.get("rows") or []:
        cells = row["versions"]
        level = levels.get(int(row["clients"]), {})
        out.append([
            str(row["clients"]),
            _tps(cells[0].get("tps")),
            _tps(cells[index].get("tps")),
            _ratio(level.get("tps_ratio")),
            _interval(level.get("tps_ratio_low"), level.get("tps_ratio_high")),
            str(level.get("verdict_holm") or "-"),
            "/".join(str(n) for n in level.get("repeats") or []) or "-",
        ])  # fmt: skip
    return out


HEADERS = ["clients", "{base} tps", "{other} tps", "change", "95% interval", "verdict", "repeats"]


def _pairs(body: dict[str, Any]) -> list[tuple[int, str, str, str]]:
    """(index of the version among the series, baseline label, version label, curve sentence)."""
    series = [s["label"] for s in body.get("series") or []]
    base = series[0] if series else "?"
    return [
        (i, base, v["label"], v.get("summary") or "")
        for i, v in enumerate(body.get("verdicts") or [], 1)
    ]


def _text(verdict: Verdict) -> str:
    body = verdict.body
    lines = [f"{verdict.title}, threshold {body.get('threshold_pct', 2):g}%"]
    for index, base, other, sentence in _pairs(body):
        heads = [h.format(base=base, other=other) for h in HEADERS]
        table = [heads, *_rows(body, index)]
        widths = [max(len(r[c]) for r in table) for c in range(len(heads))]
        lines.append("")
        for row in table:
            lines.append(
                "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            )
        lines.append(sentence)
    lines.extend(_notes(body))
    lines += ["", verdict.permalink]
    return "\n".join(lines) + "\n"


def _markdown(verdict: Verdict) -> str:
    body = verdict.body
    lines = [f"### BenchHub: {verdict.title}", ""]
    for index, base, other, sentence in _pairs(body):
        heads = [h.format(base=_md(base), other=_md(other)) for h in HEADERS]
        lines.append("| " + " | ".join(heads) + " |")
        lines.append("|" + "---:|" * 5 + ":---|---:|")
        for row in _rows(body, index):
            row[5] = f"**{row[5]}**" if row[5] in ("slower", "faster") else row[5]
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", _md(sentence), ""]
    notes = _notes(body)
    lines += [*(f"> {_md(n)}" for n in notes), *([""] if notes else [])]
    lines.append(
        f"Threshold {body.get('threshold_pct', 2):g}%, verdicts after Holm's correction. "
        f"[Open the comparison]({verdict.permalink})"
    )
    return "\n".join(lines) + "\n"


def _notes(body: dict[str, Any]) -> list[str]:
    notes = []
    if body.get("missing"):
        notes.append("not found: " + ", ".join(body["missing"]))
    if body.get("noise"):
        notes.append(str(body["noise"]))
    return notes


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _tps(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{100 * (value - 1):+.1f}%"


def _interval(low: Any, high: Any) -> str:
    if low is None or high is None:
        return "-"
    return f"[{100 * (low - 1):+.1f}%, {100 * (high - 1):+.1f}%]"
