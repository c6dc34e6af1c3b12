"""A run's per-second samples a page at a time, for the results API's `?progress=true`.

A run holds up to MAX_RUN_SAMPLES progress and telemetry samples; one response carries at most
SAMPLE_PAGE_MAX of them. The samples are numbered across the run: each result in turn (by
client level, then repeat), its progress samples (by `t`) then its telemetry samples. A page is
the window `offset .. offset + limit` of that numbering: every result with a sample in it, each
with the samples of the window alone; results without samples ride on the first page.
The results come from `selectors.result_list` (without their raw outputs); the samples of both
kinds are counted in one query and sliced in the database (`selectors.sample_lengths`,
`selectors.progress_window`, `selectors.telemetry_window`).

A row's raw output is its head as the run page shows it (excerpts.py: at most
OUTPUT_SHOWN_CHARS each, OUTPUTS_SHOWN_CHARS for the page's rows together, cut in the database),
with `raw_output_chars`, the whole output's length, and `raw_output_url`, where it is read
whole or in pages of characters (texts_api.py). A page of samples is then at most about
0.25 MB of samples plus 64,000 characters of outputs, whatever the run holds: a result's output
may be 5 MB, and a page once repeated it whole on every page its samples spanned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.utils.urls import remove_query_param, replace_query_param

from benchhub.results import selectors
from benchhub.results.excerpts import (
    NO_TEXT,
    OUTPUT_SHOWN_CHARS,
    RESULT_OUTPUTS,
    output_excerpts,
    result_output_url,
    text_heads,
)
from benchhub.results.models import Result
from benchhub.results.serializers import (
    ProgressOutSerializer,
    ResultOutSerializer,
    ResultWithProgressOutSerializer,
)

# Samples a page holds at most (docs/runner-api.md): about 0.25 MB of JSON, tens of ms to send.
SAMPLE_PAGE_MAX = 2000


class SamplePageInSerializer(serializers.Serializer):
    """The page's query parameters; a bad one is a 400 naming it."""

    offset = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(
        min_value=1, max_value=SAMPLE_PAGE_MAX, default=SAMPLE_PAGE_MAX
    )


class SamplePageOutSerializer(serializers.Serializer):
    """The response's shape, for the schema."""

    count = serializers.IntegerField(help_text="progress and telemetry samples of the run")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ResultWithProgressOutSerializer(many=True)


def samples_page(
    results: Sequence[Result], *, run_uuid: str, offset: int, limit: int
) -> tuple[list[dict], int]:
    """(rows of the page, samples of the run). Counts each result's samples in the database
    and fetches only the slices inside the window, and the heads of the page's outputs."""
    lengths = selectors.sample_lengths(result_ids=[result.pk for result in results])
    rows, start = [], 0
    on_page = []
    for result in results:
        n_progress, n_telemetry = lengths.get(result.pk, (0, 0))
        progress_page = _slice(selectors.progress_window, result, start, n_progress, offset, limit)
        start += n_progress
        telemetry_page = _slice(
            selectors.telemetry_window, result, start, n_telemetry, offset, limit
        )
        start += n_telemetry
        if progress_page or telemetry_page or (offset == 0 and not (n_progress or n_telemetry)):
            row = dict(ResultOutSerializer(result).data)
            row["progress"] = ProgressOutSerializer(progress_page, many=True).data
            row["telemetry"] = telemetry_page
            rows.append(row)
            on_page.append(result)
    _outputs_shown(rows, on_page, run_uuid=run_uuid)
    return rows, start


def _outputs_shown(rows: list[dict], results: list[Result], *, run_uuid: str) -> None:
    """Sets each row's `raw_output` (its head), `raw_output_chars` and `raw_output_url` (null
    when the result has no output)."""
    heads = text_heads(
        source=RESULT_OUTPUTS, owner_ids=[r.pk for r in results], limit=OUTPUT_SHOWN_CHARS
    )
    shown = output_excerpts([heads.get(r.pk, NO_TEXT) for r in results])
    for row, result, output in zip(rows, results, shown, strict=True):
        row["raw_output"] = output.head
        row["raw_output_chars"] = output.total_chars
        row["raw_output_url"] = (
            result_output_url(run_uuid=run_uuid, result_id=result.pk)
            if output.total_chars
            else None
        )


def _slice(
    window: Callable[..., list[dict[str, Any]]],
    result: Result,
    start: int,
    count: int,
    offset: int,
    limit: int,
) -> list[dict[str, Any]]:
    """The result's samples numbered `start` .. `start + count` - 1 across the run that fall in
    `offset .. offset + limit`, read by `window` (none read when none fall in it)."""
    lo, hi = max(0, offset - start), max(0, min(count, offset + limit - start))
    return window(result_id=result.pk, start=lo, stop=hi) if lo < hi else []


def samples_page_out(
    request: Request, results: Sequence[Result], *, run_uuid: str, offset: int, limit: int
) -> dict[str, Any]:
    """The response body: the page's rows, the run's sample count and links to the pages
    before and after (null at either end)."""
    rows, count = samples_page(results, run_uuid=run_uuid, offset=offset, limit=limit)
    url = request.build_absolute_uri()
    after = offset + limit
    before = max(0, offset - limit)
    return {
        "count": count,
        "next": replace_query_param(url, "offset", after) if after < count else None,
        "previous": (
            None
            if offset == 0
            else remove_query_param(url, "offset")
            if before == 0
            else replace_query_param(url, "offset", before)
        ),
        "results": rows,
    }
