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
# Where orjson's text can differ from json.dumps': a float under 1e-4 (orjson writes 0.00001 or
# 2.5e-7 where Python writes 1e-05, 2.5e-07), and any character json.dumps escapes as \uXXXX
# and orjson writes as it is (non-ASCII, DEL). A text with none of these is the same text.
_MAYBE_DIFFERENT = (b"e-", b"0.0000", b"\x7f")


def canonical_digest(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=default)
    return hashlib.sha256(canonical.encode()).hexdigest()


def json_digest(value: Any) -> str:
    """canonical_digest(value, default=str) of a value made of JSON's types (dict, list, str,
    int, float, bool, None: what a JSON parser returns), the same digest in a tenth of the time
    on an agent's upload: orjson writes the canonical text, and wherever its text could differ
    from the standard library's (see _MAYBE_DIFFERENT, and every value orjson refuses: a key that
    is not a string, an integer past 64 bits, any other type) the standard library writes it."""
    try:
        text = orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return canonical_digest(value, default=str)
    if not text.isascii() or any(marker in text for marker in _MAYBE_DIFFERENT):
        return canonical_digest(value, default=str)
    return hashlib.sha256(text).hexdigest()


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to the standard library")
