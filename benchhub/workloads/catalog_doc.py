"""The facts of each catalog entry as docs/workloads.md gives them: its params and the small and
published jobs, written from the catalog itself (`python manage.py catalog_doc`) so that the
document cannot say one thing while the code does another.

Pure code. The document keeps its prose; each entry's facts sit between two markers,
`<!-- catalog-entry: <id> -->` and `<!-- /catalog-entry -->`, and only that text is replaced.
"""

import re
from collections.abc import Mapping

from benchhub.workloads.catalog import entry_list
from benchhub.workloads.catalog_types import Entry, JobDefaults, Param, ParamValue

BLOCK = re.compile(
    r"<!-- catalog-entry: (?P<id>[\w-]+) -->\n(?P<body>.*?)<!-- /catalog-entry -->", re.DOTALL
)
NOTE = "<!-- catalog-entry: {id} -->\n"


def _value(value: ParamValue | None) -> str:
    # None: not from the publication (a param's `published`), or no bound.
    return "—" if value is None else str(value)


def _bounds(param: Param) -> str:
    if param.type == "int":
        return f"{_value(param.minimum)}..{_value(param.maximum)}"
    if param.type == "choice":
        return " \\| ".join(param.choices)
    if param.type == "str":
        return f"at most {param.max_length} characters"
    return ""


def _params_table(entry: Entry) -> list[str]:
    if not entry.params:
        return []
    rows = [
        "| param | type | small default | published | bounds |",
        "|---|---|---|---|---|",
    ]
    for p in entry.params:
        default = "(empty)" if p.default == "" else str(p.default)
        rows.append(f"| `{p.name}` | {p.type} | {default} | {_value(p.published)} | {_bounds(p)} |")
    return [*rows, ""]


def _number(value: float) -> str:
    return f"{value:g}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _threads(job: JobDefaults) -> str:
    if job.threads_policy == "fixed":
        return f"threads fixed {job.threads}"
    if job.threads_policy == "pairs":
        return "threads pairs " + " ".join(f"{c}/{t}" for c, t in job.level_threads.items())
    return f"threads {job.threads_policy}"


def _duration(job: JobDefaults) -> str:
    by_duration: dict[float, list[str]] = {}
    for level, seconds in job.level_durations.items():
        by_duration.setdefault(seconds, []).append(level)
    exceptions = "; ".join(f"{_number(s)} s at {_and(levels)}" for s, levels in by_duration.items())
    return f"{_number(job.duration_s)} s" + (f" ({exceptions})" if exceptions else "")


def job_line(job: JobDefaults) -> str:
    """One sentence: clients, threads, scale, duration, repeats, tablespaces, settings."""
    parts = ["clients " + " ".join(str(c) for c in job.clients), _threads(job)]
    if job.scale is not None:
        parts.append(f"scale {job.scale}")
    parts.append(_duration(job))
    if job.repeats != 1:
        parts.append(f"{job.repeats} repeats")
    if job.tablespaces:
        parts.append("tablespaces " + ", ".join(job.tablespaces))
    settings = ", ".join(f"{k}={v}" for k, v in job.config_overrides.items()) or "none"
    return "; ".join([*parts, f"settings {settings}"]) + "."


def _effective(entry: Entry, job: JobDefaults, params: Mapping[str, ParamValue]) -> JobDefaults:
    # What a job that names the entry with these params gets (the scale param is the job's
    # scale, E4's level is its connections).
    return entry.job_for(job, params)


def entry_block(entry: Entry) -> str:
    """The generated text of one entry, markers included."""
    small = _effective(entry, entry.small_job, entry.defaults())
    published = "—."
    if entry.published_job is not None:
        params = entry.published_params() or {}
        published = job_line(_effective(entry, entry.published_job, params))
    lines = [
        NOTE.format(id=entry.id).rstrip("\n"),
        *_params_table(entry),
        f"Small job: {job_line(small)}  ",
        f"Published job: {published}",
        "<!-- /catalog-entry -->",
    ]
    return "\n".join(lines)


def catalog_doc_update(text: str) -> str:
    """`text` with every entry's block rewritten from the catalog. Raises ValueError when an
    entry has no block, or a block names no entry, or an entry has two."""
    entries = {entry.id: entry for entry in entry_list()}
    found = [match["id"] for match in BLOCK.finditer(text)]
    unknown = sorted(set(found) - set(entries))
    missing = [entry_id for entry_id in entries if entry_id not in found]
    twice = sorted({entry_id for entry_id in found if found.count(entry_id) > 1})
    if unknown or missing or twice:
        raise ValueError(f"catalog blocks: missing {missing}, unknown {unknown}, twice {twice}")
    return BLOCK.sub(lambda match: entry_block(entries[match["id"]]), text)
