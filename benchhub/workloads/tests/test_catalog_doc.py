"""docs/workloads.md against the catalog: each entry's params table and its small and published
jobs, read back from the document, are the catalog's; the document is what `catalog_doc`
writes; a stale document is caught."""

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchhub.testing.processes import ROOT
from benchhub.workloads.catalog import entry_get, entry_list
from benchhub.workloads.catalog_doc import catalog_doc_update
from benchhub.workloads.catalog_types import Entry, JobDefaults

DOC = ROOT / "docs" / "workloads.md"
BLOCK = re.compile(r"<!-- catalog-entry: ([\w-]+) -->\n(.*?)<!-- /catalog-entry -->", re.DOTALL)


def doc_blocks() -> dict[str, str]:
    return dict(BLOCK.findall(DOC.read_text()))


def parse_job(sentence: str) -> dict[str, Any]:
    """`clients 8 32; threads fixed 2; scale 10; 10 s; settings a=b, c=d` as job fields."""
    facts: dict[str, Any] = {
        "level_threads": {},
        "level_durations": {},
        "threads": None,
        "scale": None,
        "repeats": 1,
        "tablespaces": [],
    }
    for part in sentence.split("; "):
        word, _, rest = part.partition(" ")
        if word == "clients":
            facts["clients"] = [int(c) for c in rest.split()]
        elif word == "threads":
            policy, *more = rest.split()
            facts["threads_policy"] = policy
            if policy == "fixed":
                facts["threads"] = int(more[0])
            elif policy == "pairs":
                facts["level_threads"] = dict(pair.split("/") for pair in more)
        elif word == "scale":
            facts["scale"] = int(rest)
        elif word == "tablespaces":
            facts["tablespaces"] = rest.split(", ")
        elif rest == "repeats":
            facts["repeats"] = int(word)
        elif word == "settings":
            pairs = [] if rest == "none" else [kv.split("=", 1) for kv in rest.split(", ")]
            facts["config_overrides"] = dict(pairs)
        else:
            duration = re.fullmatch(r"([\d.]+) s(?: \(([\d.]+) s at (.+)\))?", part)
            assert duration, f"unknown statement {part!r}"
            facts["duration_s"] = float(duration[1])
            if duration[2]:
                levels = re.split(r", | and ", duration[3])
                facts["level_durations"] = dict.fromkeys(levels, float(duration[2]))
    return facts


def job_facts(job: JobDefaults) -> dict[str, Any]:
    return {
        "clients": job.clients,
        "threads_policy": job.threads_policy,
        "threads": job.threads if job.threads_policy == "fixed" else None,
        "level_threads": {c: str(t) for c, t in job.level_threads.items()},
        "level_durations": {level: float(s) for level, s in job.level_durations.items()},
        "scale": job.scale,
        "duration_s": float(job.duration_s),
        "config_overrides": job.config_overrides,
        "repeats": job.repeats,
        "tablespaces": job.tablespaces,
    }


def parse_params(block: str) -> dict[str, tuple[str, str, str]]:
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    cells = [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]
    return {
        name.strip("`"): (kind, default, published) for name, kind, default, published, _ in cells
    }


def test_it_documents_every_catalog_entry_once_and_nothing_else():
    assert sorted(doc_blocks()) == sorted(entry.id for entry in entry_list())
    assert len(BLOCK.findall(DOC.read_text())) == len(entry_list())


@pytest.mark.parametrize("entry", entry_list(), ids=lambda entry: entry.id)
def test_it_states_the_catalogs_jobs_for_each_entry(entry: Entry):
    block = doc_blocks()[entry.id]
    small = re.search(r"^Small job: (.*)\.  $", block, re.MULTILINE)
    published = re.search(r"^Published job: (.*)\.$", block, re.MULTILINE)
    assert small and published, block
    small_job = entry.job_for(entry.small_job, entry.defaults())
    assert parse_job(small[1]) == job_facts(small_job)
    if entry.published_job is None:
        assert published[1] == "—"
    else:
        job = entry.job_for(entry.published_job, entry.published_params() or {})
        assert parse_job(published[1]) == job_facts(job)


@pytest.mark.parametrize("entry", entry_list(), ids=lambda entry: entry.id)
def test_it_states_the_catalogs_params_for_each_entry(entry: Entry):
    expected = {
        p.name: (
            p.type,
            "(empty)" if p.default == "" else str(p.default),
            "—" if p.published is None else str(p.published),
        )
        for p in entry.params
    }
    assert parse_params(doc_blocks()[entry.id]) == expected


def test_it_says_the_e2_published_jobs_keep_max_connections_11000():
    for entry_id in ("e2-idle-connections", "e2-connection-sweep"):
        entry = entry_get(entry_id=entry_id)
        assert entry and entry.published_job
        assert entry.published_job.config_overrides == {"max_connections": "11000"}
        assert "30 s; settings max_connections=11000." in doc_blocks()[entry_id]


def test_the_document_is_what_catalog_doc_writes():
    text = DOC.read_text()
    assert catalog_doc_update(text) == text
    call_command("catalog_doc", "--check")


def test_it_catches_a_stale_or_incomplete_document(tmp_path: Path):
    text = DOC.read_text()
    stale = tmp_path / "workloads.md"
    stale.write_text(text.replace("settings max_connections=11000", "settings none", 1))
    with pytest.raises(CommandError, match="stale"):
        call_command("catalog_doc", "--check", "--doc", str(stale))
    call_command("catalog_doc", "--doc", str(stale))
    assert stale.read_text() == text
    # The parser reads what was there before the fix as a different job.
    assert parse_job("clients 128; threads fixed 16; 30 s; settings none")["config_overrides"] == {}
    missing = re.sub(
        r"<!-- catalog-entry: e3-key-insert -->.*?<!-- /catalog-entry -->\n",
        "",
        text,
        flags=re.DOTALL,
    )
    with pytest.raises(ValueError, match="e3-key-insert"):
        catalog_doc_update(missing)
