"""The API's JSON parser: refuses, before any view sees it, JSON that PostgreSQL would refuse.

Free-form JSON (workload options, progress, host facts' extra, schedule templates) goes into
jsonb and text columns as sent. PostgreSQL refuses NUL characters (`\\u0000`) in text and jsonb,
lone UTF-16 surrogates (not UTF-8), and numbers JSON cannot carry (`1e999` parses to infinity;
NaN and Infinity are not JSON at all); deep nesting makes Python's own decoder recurse without
bound. Each would be a database error (500) deep inside a service, after other rows were written,
so the whole request body is checked here and refused with a 400 naming the first bad value by
its path in the request (`workload.options[2]`, `progress.stage`).

A body is parsed by orjson when orjson gives exactly what the standard library's parser gives
(about four times faster on an agent's upload of 500 kB); every body orjson refuses, and every
body that could hold an integer orjson would turn into a float, is parsed by the standard
library as before, so the errors and the values are the standard library's.
"""

import json
import math
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

import orjson
from rest_framework import exceptions, parsers

# Deeper than anything BenchHub sends (a run upload nests about 6 levels).
MAX_DEPTH = 32

# A NUL or a UTF-16 surrogate arrives in a body only escaped (decoded UTF-8 holds neither).
SUSPECT_ESCAPES = ("\\u0000", "\\ud", "\\uD")


class UnstorableJSON(exceptions.ValidationError):
    """A value the database cannot store, with the path of the field that holds it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__({path or "body": [message]})


def _path(prefix: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


def _check_text(value: str, path: str) -> None:
    if "\x00" in value:
        raise UnstorableJSON(path, "NUL characters (\\u0000) cannot be stored.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UnstorableJSON(path, "Lone surrogates are not valid Unicode text.") from None


def json_check(value: Any, path: str = "", depth: int = 0) -> None:
    """Raise UnstorableJSON for the first value under `value` that PostgreSQL would refuse."""
    if depth > MAX_DEPTH:
        raise UnstorableJSON(path, f"Nested deeper than {MAX_DEPTH} levels.")
    if isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise UnstorableJSON(path, "A finite number is required (not NaN or infinity).")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, _path(path, key))
            json_check(item, _path(path, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            json_check(item, _path(path, index), depth + 1)


CONTAINERS = frozenset((dict, list))


def nested_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether json_check would find a value nested deeper than `limit`: the containers, level
    by level, without paths (json_check then names where). Each level's items are sorted into
    containers by C loops (chain, map, compress): an upload's tens of thousands of numbers are
    never looked at one by one in Python."""
    level = [value] if type(value) in CONTAINERS else []
    depth = 0
    while level:
        if depth >= limit and any(level):  # a container here holds items deeper than the limit
            return True
        kinds = list(map(type, level))
        dicts = compress(level, map(is_, kinds, repeat(dict)))
        lists = compress(level, map(is_, kinds, repeat(list)))
        items = list(chain(chain.from_iterable(map(dict.values, dicts)), *lists))
        level = list(compress(items, map(CONTAINERS.__contains__, map(type, items))))
        depth += 1
    return False


class _Floats:
    """json.loads' parse_float: float(), noting a literal that overflows to infinity."""

    def __init__(self) -> None:
        self.overflowed = False

    def __call__(self, literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            self.overflowed = True
        return value


# Digits to "0", everything else to " ": a run of LONG_DIGITS zeros in the translation is a run
# of that many digits in the text, found by one C-level pass each (a regex took ten times longer).
DIGITS = bytes(ord("0") if chr(c).isdigit() and c < 128 else ord(" ") for c in range(256))
# orjson reads an integer literal beyond 64 bits as a float (1e+29 for 29 digits); the standard
# library keeps it exact. 2**64 has 20 digits, so a text without 20 digits in a row holds none.
LONG_DIGITS = b"0" * 20


def body_parse(text: str) -> Any:
    """The body's JSON, refused as json_check refuses (UnstorableJSON naming the path) or as
    JSON (ValueError, RecursionError). json_check's walk of every value runs only when the body
    could hold what it refuses: an escaped NUL or surrogate in the text, a number that
    overflowed, or nesting past MAX_DEPTH. Nearly every body has none of these, so an upload of
    tens of thousands of values is not walked in Python."""
    data, overflowed = _loads(text)
    # Nearly every body has no escape of this kind at all: one scan for its start tells.
    suspect = "\\u" in text and any(e in text for e in SUSPECT_ESCAPES)
    if overflowed or suspect or nested_deeper(data):
        json_check(data)
    return data


def _loads(text: str) -> tuple[Any, bool]:
    """The JSON of `text`, and whether a number literal overflowed to infinity. orjson where its
    values are the standard library's; the standard library for any text orjson refuses (its
    error messages, and what json_check then names) or that could hold a long integer."""
    encoded = text.encode("utf-8", "surrogatepass")
    if LONG_DIGITS not in encoded.translate(DIGITS):
        try:
            return orjson.loads(encoded), False
        except orjson.JSONDecodeError:
            pass  # refused, or something only the standard library reads (1e999): its turn
    floats = _Floats()
    return json.loads(text, parse_constant=_refuse_constant, parse_float=floats), floats.overflowed


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


class StrictJSONParser(parsers.JSONParser):
    """JSONParser, plus json_check over the parsed body and a bound on nesting."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
            return body_parse(text)
        except (ValueError, RecursionError) as exc:
            raise exceptions.ParseError(f"JSON parse error: {exc}"[:300]) from None
