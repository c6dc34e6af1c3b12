"""Strict JSON fields: a number must be a JSON number, finite; DRF's defaults coerce strings.

Agents post machine-made JSON, so "12" where 12 belongs is a bug in the sender, and NaN or
Infinity is never a measurement: both are refused with a message naming the field.
"""

import math
from typing import Any

from rest_framework import serializers

# The range of PostgreSQL's integer and bigint columns: a value past its column's range is a
# database error (500), so every integer field is bounded at the edge, by default to `integer`.
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
BIGINT_MAX = 2**63 - 1


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, bounded by default to PostgreSQL's `integer` range (pass max_value for a
    bigint column)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_value", INT_MAX)
        kwargs.setdefault("min_value", INT_MIN)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    default_error_messages = {"non_finite": "A finite number is required (not NaN or infinity)."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        if not math.isfinite(data):
            self.fail("non_finite")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string, kept exactly as sent; numbers are not turned into strings."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 10000


class StringMapField(serializers.DictField):
    """An object of string -> string (settings, sysctl values), with bounded sizes."""

    def __init__(self, *, max_items: int = 5000, **kwargs: Any) -> None:
        self.max_items = max_items
        super().__init__(
            child=StrictCharField(allow_blank=True, max_length=MAX_VALUE_CHARS), **kwargs
        )

    def to_internal_value(self, data: Any) -> dict[str, str]:
        if self._plainly_valid(data):
            return dict(data)
        value = super().to_internal_value(data)
        if len(value) > self.max_items:
            raise serializers.ValidationError(f"At most {self.max_items} entries are accepted.")
        for key in value:
            if not key or len(key) > MAX_KEY_CHARS:
                raise serializers.ValidationError(
                    f"Key '{key[:50]}' must be 1 to {MAX_KEY_CHARS} characters."
                )
        return value

    def _plainly_valid(self, data: Any) -> bool:
        """Whether every entry passes as it is: ASCII strings (no surrogates), no NUL, within
        the bounds. A server's ~350 settings and their sources are, and skip the child field's
        validators per entry (a tenth of an upload's validation); anything else gets them, and
        their messages."""
        return (
            type(data) is dict
            and len(data) <= self.max_items
            and all(
                type(k) is str
                and type(v) is str
                and 0 < len(k) <= MAX_KEY_CHARS
                and len(v) <= MAX_VALUE_CHARS
                and k.isascii()
                and v.isascii()
                and "\x00" not in v
                for k, v in data.items()
            )
        )
