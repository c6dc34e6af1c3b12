"""One way to fingerprint data: SHA-256 of its canonical JSON (sorted keys, no spaces).

Hardware fingerprints, configuration and workload hashes, comparability keys and upload digests
all use it, so equal content always gives equal digests across the code base.
"""

import hashlib
import json
from collections.abc import Callable
from typing import Any

import orjson

# orjson's options for the canonical text: dates, dataclasses and subclasses of str, int, dict
# and list go to `default` (which refuses them: the standard library then digests them).
_ORJSON_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# Where orjson's text can differ from json.dumps': a number under 1e-4 (orjson writes 0.00001
# or 2.5e-7 where Python writes 1e-05, 2.5e-07), and any character json.dumps escapes as \uXXXX
# and orjson writes as it is (non-ASCII, DEL). A text with none of these is the same text. The
# small numbers are told from strings by where they start (the text's start, after ":", "," or
# "["): a bare "e-" also matches a quarter of run UUIDs ("...94be-49fe..."), which then paid for
# both writers. A string that holds such a number's text only costs the standard library's.
_SMALL_NUMBER_MARKS = (b"e-", b"0.0000")
_NUMBER_CHARS = frozenset(b"0123456789.")
_NUMBER_STARTS = frozenset(b":,[")


def canonical_digest(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=default)
    return hashlib.sha256(canonical.encode()).hexdigest()


def json_digest(value: Any) -> str:
    """canonical_digest(value, default=str) of a value made of JSON's types (dict, list, str,
    int, float, bool, None: what a JSON parser returns), the same digest in a tenth of the time
    on an agent's upload: orjson writes the canonical text, and wherever its text could differ
    from the standard library's (see _SMALL_NUMBER_MARKS, and every value orjson refuses: a key
    that is not a string, an integer past 64 bits, any other type) the standard library writes
    it."""
    try:
        text = orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return canonical_digest(value, default=str)
    if not text.isascii() or b"\x7f" in text or _small_number(text):
        return canonical_digest(value, default=str)
    return hashlib.sha256(text).hexdigest()


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to the standard library")


def _small_number(text: bytes) -> bool:
    """Whether orjson's `text` may hold a number under 1e-4: a mark (substring searches, fast on
    an upload's half megabyte) inside a token of digits and dots that starts where a number can."""
    for mark in _SMALL_NUMBER_MARKS:
        at = text.find(mark)
        while at != -1:
            start = at
            while start > 0 and text[start - 1] in _NUMBER_CHARS:
                start -= 1
            if start > 0 and text[start - 1] == ord("-"):
                start -= 1
            if start == 0 or text[start - 1] in _NUMBER_STARTS:
                return True
            at = text.find(mark, at + 1)
    return False
