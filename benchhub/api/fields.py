"""Strict JSON fields: a number must be a JSON number, finite; DRF's defaults coerce strings.

Agents post machine-made JSON, so "12" where 12 belongs is a bug in the sender, and NaN or
Infinity is never a measurement: both are refused with a message naming the field. An upload's
long lists of flat records (progress samples, statement latencies) have their own field,
RecordListField, validated in one loop rather than a nested serializer per record.
"""

import math
from collections.abc import Mapping
from operator import itemgetter, methodcaller
from typing import Any

from benchhub_runner.host.tags import HOST_TAG_MAX_LENGTH, HOST_TAGS_MAX, host_tags_problems
from rest_framework import serializers

from benchhub.querystrings import TAG_MAX_LENGTH, TAGS_MAX, tags_listed

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
        try:
            finite = math.isfinite(data)
        except OverflowError:
            # An integer past a float's range (JSON keeps 10**400 exact): no float holds it.
            self.fail("invalid")
        if not finite:
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


class HostTagsField(serializers.ListField):
    """A list of host tags as benchhub_runner.host.tags bounds them (count, spelling, each once):
    a host's offer at its claim, a job's or a schedule's required tags. Errors name the tag
    (`host_tags[1]`) or the list."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            f"at most {HOST_TAGS_MAX}, each {HOST_TAG_MAX_LENGTH} "
            "characters at most: lower-case letters, digits and . _ -",
        )
        super().__init__(child=StrictCharField(), max_length=HOST_TAGS_MAX, **kwargs)

    def to_internal_value(self, data: Any) -> list[str]:
        if isinstance(data, str) or not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        problems = host_tags_problems(data, field="")
        # Keyed by index, as DRF keys a list's item errors, so the path reads `host_tags[1]`.
        by_tag = {path[1:-1]: [why] for path, why in problems.items() if path.startswith("[")}
        if by_tag:
            raise serializers.ValidationError(by_tag)
        if problems:
            raise serializers.ValidationError([problems[""]])
        return list(data)


class TagsParamField(serializers.ListField):
    """A tag filter's query parameter, `?tag=a&tag=b` or `?tag=a,b` (querystrings.tags_listed):
    the review tags every run must carry. Past its bounds, a 400 naming the parameter."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "review tags every run must carry: repeat the parameter or separate tags with "
            f"commas (at most {TAGS_MAX}, each {TAG_MAX_LENGTH} characters at most)",
        )
        super().__init__(child=serializers.CharField(), required=False, **kwargs)

    def to_internal_value(self, data: Any) -> list[str]:
        values = [data] if isinstance(data, str) else data
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            self.fail("not_a_list", input_type=type(data).__name__)
        try:
            return tags_listed(values)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 10000


STRINGS = frozenset((str,))


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
        if type(data) is not dict or len(data) > self.max_items:
            return False
        if not data:
            return True
        keys, values = list(data), list(data.values())
        # Each condition over all entries at once, by C loops.
        return (
            STRINGS.issuperset(map(type, keys))
            and STRINGS.issuperset(map(type, values))
            and 0 < min(map(len, keys))
            and max(map(len, keys)) <= MAX_KEY_CHARS
            and max(map(len, values)) <= MAX_VALUE_CHARS
            and all(map(str.isascii, keys))
            and all(map(str.isascii, values))
            and not any(map(methodcaller("__contains__", "\x00"), values))
        )


INF = math.inf
MAX_TEXT = 100000  # characters of a record's string value


class Records(list):
    """A RecordListField's validated items, with their values key by key (`columns`) as the
    check read them: what stores them as arrays (an upload's progress) need not read them
    again. The columns are a snapshot: code that changes validated items makes a plain list
    of them (nothing in BenchHub does)."""

    def __init__(self, items: Any = (), *, columns: dict[str, list[Any]]) -> None:
        super().__init__(items)
        self.columns = columns


class RecordListField(serializers.Field):
    """A list of flat records whose keys have fixed types; validated in one tight loop.

    `spec` maps key -> (kind, required, minimum) with kind "float", "int", "str" or "int|str".
    Errors name the item and key, e.g. `[12].tps`.
    """

    def __init__(
        self, *, spec: Mapping[str, tuple[str, bool, float | None]], max_items: int, **kwargs: Any
    ) -> None:
        self.spec = spec
        self.max_items = max_items
        self._keys = frozenset(spec)
        self._fields = [
            (key, kind, required, minimum) for key, (kind, required, minimum) in spec.items()
        ]
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        if not isinstance(data, list):
            raise serializers.ValidationError("Expected a list.")
        if len(data) > self.max_items:
            raise serializers.ValidationError(f"At most {self.max_items} items are accepted.")
        columns = self._plain_columns(data)
        if columns is not None:
            # The items themselves, not copies: a parsed body's objects belong to this request
            # alone, and nothing changes them (copying an upload's thousands of samples was a
            # tenth of its validation).
            return Records(data, columns=columns)
        errors: dict[str, list[str]] = {}
        out = []
        for index, item in enumerate(data):
            if not isinstance(item, dict):
                errors[f"[{index}]"] = ["Expected an object."]
                continue
            record, problems = self._record(item)
            for key, message in problems:
                errors[f"[{index}].{key}"] = [message]
            out.append(record)
            if len(errors) >= 20:
                break
        if errors:
            raise serializers.ValidationError(errors)
        return out

    def _record(self, item: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        record: dict[str, Any] = {}
        problems: list[tuple[str, str]] = []
        if not self._keys.issuperset(item):
            problems.extend((key, "Unknown field.") for key in item.keys() - self._keys)
        for key, kind, required, minimum in self._fields:
            value = item.get(key)
            record[key] = value
            if value is None:
                if required:
                    problems.append((key, "This field is required."))
                continue
            # Fast path for the common case (an upload carries tens of thousands of values): a
            # finite float or an int within bounds. Anything else gets the full check, which
            # also words the error.
            kind_of = type(value)
            if kind_of is float and kind == "float":
                if -INF < value < INF and (minimum is None or value >= minimum):
                    continue
            elif (
                kind_of is int
                and kind != "str"
                and (minimum is None or value >= minimum)
                and INT_LOW <= value <= BIGINT_MAX
            ):
                continue
            message = _check_value(value, kind, minimum)
            if message:
                problems.append((key, message))
        return record, problems

    def _plain_columns(self, data: list[Any]) -> dict[str, list[Any]] | None:
        """The items' values key by key, when every item passes as it is: an object with every
        key of the spec, each value of its key's kind (a float key takes an int too) within its
        bounds, or None where not required; else None. Checked a column at a time by C loops
        (map, set, min, fsum), about four times faster than item by item on an agent's progress
        samples; a list that does not pass takes the item-by-item checks, which find and word
        each error."""
        width = len(self._fields)
        if not data:
            return {key: [] for key in self._keys}
        if set(map(type, data)) != {dict} or set(map(len, data)) != {width}:
            return None
        if not all(map(self._keys.issuperset, data)):
            return None
        columns = {}
        for key, kind, required, minimum in self._fields:
            values = list(map(itemgetter(key), data))
            if not _column_plain(values, kind, required, minimum):
                return None
            columns[key] = values
        return columns

    def to_representation(self, value: Any) -> Any:
        return value


# A record's integers are bounded to PostgreSQL's bigint (progress counts are bigint columns).
INT_LOW = -BIGINT_MAX - 1
KINDS: dict[str, frozenset[type]] = {
    "float": frozenset({float, int}),
    "int": frozenset({int}),
    "str": frozenset({str}),
    "int|str": frozenset({int, str}),
}


def _column_plain(values: list[Any], kind: str, required: bool, minimum: float | None) -> bool:
    """Whether every value of one key passes _check_value (see RecordListField._plain)."""
    types = set(map(type, values))
    allowed = KINDS[kind] if required else KINDS[kind] | {type(None)}
    if not types <= allowed:
        return False
    if str in types:
        texts = [v for v in values if type(v) is str] if len(types) > 1 else values
        if max(map(len, texts)) > MAX_TEXT:
            return False
    numbers = [v for v in values if type(v) in (int, float)] if len(types) > 1 else values
    if not numbers or types.isdisjoint((int, float)):
        return True
    if float in types:
        try:
            if not math.isfinite(math.fsum(numbers)):  # an infinity or a NaN among them
                return False
        except OverflowError:  # finite, but their sum is not: the item-by-item checks decide
            return False
    if int in types:
        ints = [v for v in numbers if type(v) is int] if float in types else numbers
        if min(ints) < INT_LOW or max(ints) > BIGINT_MAX:
            return False
    return minimum is None or min(numbers) >= minimum


def _check_value(value: Any, kind: str, minimum: float | None) -> str | None:
    if kind == "str" or (kind == "int|str" and isinstance(value, str)):
        return (
            None if isinstance(value, str) and len(value) <= MAX_TEXT else "A string is required."
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "A number is required."
    if kind in ("int", "int|str") and not isinstance(value, int):
        return "An integer is required."
    # Before isfinite, which cannot convert an integer past a float's range.
    if isinstance(value, int) and not INT_LOW <= value <= BIGINT_MAX:
        return f"Ensure this value is between {INT_LOW} and {BIGINT_MAX}."
    if not math.isfinite(value):
        return "A finite number is required (not NaN or infinity)."
    if minimum is not None and value < minimum:
        return f"Ensure this value is greater than or equal to {minimum:g}."
    return None
