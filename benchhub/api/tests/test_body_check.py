"""The parser's fast path: body_parse skips json_check's walk unless the body could hold what
it refuses. Property: on any JSON text a client can send (UTF-8, so surrogates only escaped),
body_parse refuses exactly what json_check refuses, naming the same path."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchhub.api.parsers import MAX_DEPTH, UnstorableJSON, body_parse, json_check

NUMBER = st.from_regex(
    r"\A-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,4})?([eE][+-]?[0-9]{1,4})?\Z", fullmatch=True
)
# Every code point, surrogates and NUL included (escaped by json.dumps below).
TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
KEY = st.one_of(st.sampled_from(["a", "run_uuid", "3e123", "x\x00"]), TEXT)


def _scalar() -> st.SearchStrategy[str]:
    return st.one_of(
        NUMBER,
        TEXT.map(json.dumps),
        st.uuids().map(lambda u: json.dumps(str(u))),
        st.sampled_from(["true", "false", "null", '"1e400"', '"\\\\u0000"']),
    )


def _json_text() -> st.SearchStrategy[str]:
    values = st.recursive(
        _scalar(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
            st.lists(st.tuples(KEY, inner), max_size=4).map(
                lambda pairs: "{" + ",".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"
            ),
        ),
        max_leaves=12,
    )
    # Wrapped in up to 40 containers: nesting on either side of MAX_DEPTH.
    return st.tuples(values, st.integers(0, MAX_DEPTH + 8), st.booleans()).map(
        lambda t: (
            ("[" * t[1] + t[0] + "]" * t[1]) if t[2] else ('{"k": ' * t[1] + t[0] + "}" * t[1])
        )
    )


def _refusal(check, *args) -> str | None:
    try:
        check(*args)
    except UnstorableJSON as exc:
        return str(exc.detail)
    return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_text())
def test_the_fast_path_refuses_what_the_walk_refuses(text):
    data = json.loads(text)  # the strategy writes valid JSON
    assert _refusal(body_parse, text) == _refusal(json_check, data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_text())
def test_the_values_are_the_standard_librarys(text):
    """orjson parses most bodies: an int stays an int of every length, a float the same float."""
    expected = json.loads(text)
    try:
        parsed = body_parse(text)
    except UnstorableJSON:
        return
    # json.dumps tells 1 from 1.0 and -0.0 from 0.0, which == does not.
    assert json.dumps(parsed) == json.dumps(expected)


def test_a_long_integer_keeps_its_digits():
    text = '{"extra": {"counter": 123456789012345678901234567890, "near": 18446744073709551616}}'
    assert body_parse(text) == {
        "extra": {"counter": 123456789012345678901234567890, "near": 18446744073709551616}
    }
    assert type(body_parse("[18446744073709551615]")[0]) is int


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2, {"b": "x\\u0000"}]}',
        '{"a": "\\udc00"}',
        '{"a": [1e400]}',
        '{"a": [-12345678901234567890123.5e299]}',
        '{"a": [1' + "0" * 215 + "e99]}",  # 1e314: a long integer part, a short exponent
        "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1),
        '{"\\u0000": 1}',
    ],
)
def test_each_refusal_is_found_on_the_fast_path(text):
    data = json.loads(text)
    refused = _refusal(body_parse, text)
    assert refused is not None and refused == _refusal(json_check, data)


def test_a_clean_upload_is_not_walked(monkeypatch):
    """An agent's upload (uuids, commit ids, floats) takes the fast path."""
    from benchhub.testing.payloads import run_payload

    walked = []
    monkeypatch.setattr("benchhub.api.parsers.json_check", lambda data: walked.append(data))
    for _ in range(50):
        payload = run_payload()
        payload["build"]["commit"] = "3e1234567890abcdef3e1234567890abcdef3e12"
        assert body_parse(json.dumps(payload)) == payload
    assert walked == []
