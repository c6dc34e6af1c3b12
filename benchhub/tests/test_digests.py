"""json_digest is canonical_digest(default=str), faster: the same digest for every JSON value,
so an upload's digest (a retry told from a conflict) did not change with it."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from benchhub.digests import canonical_digest, json_digest

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # past 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),  # every magnitude, subnormals, -0.0
    st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=25,
)


@settings(max_examples=1000, deadline=None)
@given(JSON_VALUES)
def test_it_is_the_standard_librarys_digest(value):
    assert json_digest(value) == canonical_digest(value, default=str)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_of_any_size_digests_as_the_standard_library_writes_it(number):
    assert json_digest({"tps": number}) == canonical_digest({"tps": number}, default=str)


def test_an_agents_upload_digests_as_before():
    from benchhub.testing.payloads import run_payload

    payload = json.loads(json.dumps(run_payload()))
    payload["notes"] = "tps 1e-05 \u00e9\u2028 \x7f"
    assert json_digest(payload) == canonical_digest(payload, default=str)
    del payload["notes"]
    assert json_digest(payload) == canonical_digest(payload, default=str)


def test_a_run_uuid_and_strings_that_look_like_small_numbers_digest_as_before():
    from benchhub.testing.payloads import run_payload

    payload = json.loads(json.dumps(run_payload()))
    payload["run_uuid"] = "b5da8dfa-94be-49fe-9096-57d3acdc0e1f"
    assert json_digest(payload) == canonical_digest(payload, default=str)
    payload["notes"] = '[1e-5,{"x":0.00001}]'
    payload["samples"] = [1e-05, [2.5e-07, -3e-9], 0.0001, 1e16]
    assert json_digest(payload) == canonical_digest(payload, default=str)
    assert json_digest(1e-05) == canonical_digest(1e-05, default=str)
