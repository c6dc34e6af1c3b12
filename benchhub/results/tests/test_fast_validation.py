"""The upload's fast paths give what the full checks give: an item or a map that passes as it
is is copied whole, and anything else is checked value by value, with the same messages."""

import json
from typing import Any

import pytest
from benchhub_runner.results.payload import PROGRESS_FIELDS
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from benchhub.api.fields import RecordListField, StringMapField
from benchhub.results.copying import series_arrays
from benchhub.results.serializers import PROGRESS_SPEC, STATEMENT_SPEC

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=2**40),
    st.integers(min_value=2**62, max_value=2**70),  # past bigint
    st.sampled_from([10**400, -(10**400), 1e308, -1e308]),  # past a float, or sums past it
    st.floats(),  # NaN and infinities too
    st.text(max_size=5),
)


def _outcome(field: Any, data: Any) -> Any:
    try:
        return ("valid", field.run_validation(data))
    except serializers.ValidationError as exc:
        return ("refused", exc.detail)


class CheckedRecords(RecordListField):
    """The field without its fast path: every item checked key by key."""

    def _plain_columns(self, data: list[Any]) -> None:
        return None


class CheckedMap(StringMapField):
    """The field without its fast path: every entry through the child field."""

    def _plainly_valid(self, data: Any) -> bool:
        return False


def _text(outcome: Any) -> str:
    """An outcome as text that tells 1 from 1.0 and True, and ignores the order of keys (the
    records are stored as jsonb, the samples by column)."""
    return json.dumps(outcome, sort_keys=True)


def _records(spec: dict[str, Any]) -> st.SearchStrategy[list[dict[str, Any]]]:
    keys = st.sampled_from([*spec, "stray"])
    full = st.fixed_dictionaries({key: VALUES for key in spec})
    return st.lists(st.one_of(full, st.dictionaries(keys, VALUES, max_size=len(spec) + 1)),
                    max_size=4)  # fmt: skip


@pytest.mark.parametrize("spec", [PROGRESS_SPEC, STATEMENT_SPEC], ids=["progress", "statements"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_record_copied_whole_is_the_record_checked_key_by_key(spec, data):
    records = data.draw(_records(spec))
    fast = _outcome(RecordListField(spec=spec, max_items=10), records)
    checked = _outcome(CheckedRecords(spec=spec, max_items=10), records)
    assert _text(fast) == _text(checked)


def test_an_agents_progress_sample_is_copied_whole():
    sample = {"t": 1.0, "tps": 812.5, "latency_ms": 1.2, "stddev_ms": 0.3, "failed": 0,
              "skipped": 0, "lag_ms": None}  # fmt: skip
    field = RecordListField(spec=PROGRESS_SPEC, max_items=10)
    later = dict(sample, t=2.0, lag_ms=0.5)
    records = field.run_validation([sample, later])
    assert records == [sample, later]
    assert records.columns == {key: [sample[key], later[key]] for key in PROGRESS_SPEC}


@settings(max_examples=200, deadline=None)
@given(times=st.lists(st.floats(min_value=0, max_value=1e4), unique=True, max_size=30))
def test_validated_samples_give_the_arrays_their_sort_gives(times):
    samples = [{name: float(i) for name in PROGRESS_FIELDS} | {"t": t, "failed": i, "skipped": 0}
               for i, t in enumerate(times)]  # fmt: skip
    records = RecordListField(spec=PROGRESS_SPEC, max_items=100).run_validation(samples)
    assert series_arrays(records) == series_arrays(list(samples))


MAPS = st.dictionaries(
    st.text(max_size=6),
    st.one_of(
        st.text(max_size=6), st.integers(), st.none(), st.text(min_size=10001, max_size=10002)
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(MAPS)
def test_a_map_taken_whole_is_the_map_checked_entry_by_entry(data):
    fast = _outcome(StringMapField(), data)
    checked = _outcome(CheckedMap(), data)
    assert _text(fast) == _text(checked)
