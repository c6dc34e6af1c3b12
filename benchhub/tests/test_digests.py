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
