"""An upload's results read as typed rows give what DRF's field-by-field checks give: the same
rows for a valid list, the same errors (by path, word for word) for any other, and nothing
stored when one row in the middle is bad."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from benchhub.results.models import ProgressSeries, Result, Run
from benchhub.results.rows import rows_checked, rows_plan
from benchhub.results.serializers import ResultInSerializer
from benchhub.testing.payloads import result, run_payload, stream


class CheckedList(serializers.ListSerializer):
    """DRF's list without the rows' pass: every result through the serializer's fields."""


def _outcome(data: Any, *, fast: bool) -> str:
    field: serializers.ListSerializer
    if fast:
        field = ResultInSerializer(many=True, max_length=10)  # type: ignore[call-arg,assignment]
    else:
        field = CheckedList(child=ResultInSerializer(), max_length=10)
    try:
        outcome: Any = ("valid", field.run_validation(data))
    except serializers.ValidationError as exc:
        outcome = ("refused", exc.detail)
    # Tells 1 from 1.0 and True; the order of a row's keys does not matter (stored by column).
    return json.dumps(outcome, sort_keys=True, default=str)


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([0, 2**31, 2**63, 10**400, 1e308, -0.5, "", "x", "\x00", "\ud800"]),
    st.floats(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
KEYS = [*sorted(ResultInSerializer().fields), "tpss"]


@st.composite
def results(draw: st.DrawFn) -> list[Any]:
    rows = [result(c, 1, 100.0 * c, samples=draw(st.integers(0, 3))) for c in (1, 2, 4)]
    for _ in range(draw(st.integers(0, 3))):  # spoil some keys, or none
        row = draw(st.sampled_from(rows))
        key = draw(st.sampled_from(KEYS))
        if draw(st.booleans()):
            row.pop(key, None)
        else:
            row[key] = draw(ODD_VALUES)
    if draw(st.booleans()):
        rows[1]["streams"] = [stream("reads", tps=10.0, clients=2)]
    return rows


@settings(max_examples=300, deadline=None)
@given(data=results())
def test_it_gives_the_rows_and_the_errors_that_the_serializer_gives(data):
    assert _outcome(data, fast=True) == _outcome(data, fast=False)


def test_it_reads_an_agents_results_as_rows_without_the_serializer():
    rows = [result(c, r, 100.0 * c, samples=5) for c in (1, 2) for r in (1, 2)]
    child = ResultInSerializer()
    plan = rows_plan(child)
    assert plan is not None
    checked = rows_checked(rows, serializer=child, plan=plan)
    assert checked is not None
    assert [(r["clients"], r["repeat"], r["tps"]) for r in checked] == [
        (1, 1, 100.0), (1, 2, 100.0), (2, 1, 200.0), (2, 2, 200.0)
    ]  # fmt: skip
    # Defaults filled as DRF fills them.
    assert checked[0]["streams"] == [] and checked[0]["evidence"] is None


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("tps", -1.0, "Ensure this value is greater than or equal to 0."),
        ("tps", "1000", "A valid number is required."),
        ("clients", True, "A valid integer is required."),
    ],
)
def test_it_refuses_a_bad_row_in_the_middle_naming_its_field_and_stores_nothing(
    agent, key, value, message
):
    payload = run_payload(version="16.1", clients=(1, 2, 4, 8, 16), repeats=3)
    assert len(payload["results"]) == 15
    payload["results"][7][key] = value
    before = (Run.objects.count(), Result.objects.count(), ProgressSeries.objects.count())
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["fields"] == {f"results[7].{key}": [message]}
    assert (Run.objects.count(), Result.objects.count(), ProgressSeries.objects.count()) == before
