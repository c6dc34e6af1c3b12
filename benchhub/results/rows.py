"""An upload's results checked as typed rows, in one pass: what ResultInSerializer(many=True)
returns for them, without its field objects per value.

An agent's upload carries tens of results of some twenty scalars each, plus their samples. DRF
validates each scalar through a field's run_validation (a dozen calls, a validator list, an
exception handler), which cost most of an upload's validation (bench/, ingest). Here each
result's fields are read from a plan, derived once from the serializer's own fields (so the
serializer stays the one definition of a result): a scalar of the plain kinds (a strict int,
float or string, a boolean) is checked inline against the same bounds; any other field (the
sample lists, evidence, streams, errors) runs its own run_validation; then the serializer's
validate() sees the row as DRF would hand it over.

The plan only accepts: the first value it cannot pass as it is (a wrong type, a bound, an
unknown key, a missing required field, a cross-field rule) sends the whole list back to the
serializer, which finds and words every error as it always has. So a valid upload gets the same
rows, and an invalid one the same errors, field by field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core import validators as django_validators
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from benchhub.api.fields import StrictCharField, StrictFloatField, StrictIntegerField

# Validators whose rule the plan applies itself (bounds, NUL and surrogates); a field with any
# other validator runs its own run_validation.
PLAIN_VALIDATORS = (
    django_validators.MinValueValidator,
    django_validators.MaxValueValidator,
    django_validators.MinLengthValidator,
    django_validators.MaxLengthValidator,
    django_validators.ProhibitNullCharactersValidator,
    ProhibitSurrogateCharactersValidator,
)
SURROGATE = re.compile("[\ud800-\udfff]")


class NotPlain(Exception):
    """A value the plan does not pass as it is: the serializer checks the list instead."""


@dataclass(frozen=True)
class Column:
    """How one field of a result is read: `check` returns the validated value or raises
    NotPlain (or the field's own ValidationError, which means the same)."""

    name: str
    check: Callable[[Any], Any]
    required: bool
    default: Callable[[], Any] | None  # None: an omitted key stays omitted
    allow_null: bool


def _bounds(field: serializers.Field) -> tuple[float, float]:
    low = getattr(field, "min_value", None)
    high = getattr(field, "max_value", None)
    return (-math.inf if low is None else low, math.inf if high is None else high)


def _int_check(field: serializers.Field) -> Callable[[Any], Any]:
    low, high = _bounds(field)

    def check(value: Any) -> int:
        if type(value) is int and low <= value <= high:
            return value
        raise NotPlain

    return check


def _float_check(field: serializers.Field) -> Callable[[Any], Any]:
    low, high = _bounds(field)

    def check(value: Any) -> float:
        kind = type(value)
        if kind is float or kind is int:
            try:
                number = float(value)
            except OverflowError:
                raise NotPlain from None
            if math.isfinite(number) and low <= number <= high:
                return number
        raise NotPlain

    return check


def _str_check(field: serializers.CharField) -> Callable[[Any], Any]:
    longest = math.inf if field.max_length is None else field.max_length
    shortest = 0 if field.min_length is None else field.min_length
    blank = field.allow_blank

    def check(value: Any) -> str:
        if (
            type(value) is str
            and shortest <= len(value) <= longest
            and (value or blank)
            and "\x00" not in value
            and (value.isascii() or not SURROGATE.search(value))
        ):
            return value
        raise NotPlain

    return check


def _bool_check(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise NotPlain


def _plain_validators(field: serializers.Field) -> bool:
    return all(isinstance(v, PLAIN_VALIDATORS) for v in field.validators)


def _check_of(field: serializers.Field) -> Callable[[Any], Any]:
    """The inline check of a plain scalar field, or the field's own run_validation."""
    if _plain_validators(field):
        if isinstance(field, StrictIntegerField):
            return _int_check(field)
        if isinstance(field, StrictFloatField):
            return _float_check(field)
        if isinstance(field, StrictCharField) and not field.trim_whitespace:
            return _str_check(field)
        if type(field) is serializers.BooleanField:
            return _bool_check
    return field.run_validation


def _default_of(field: serializers.Field) -> Callable[[], Any] | None:
    if field.default is empty:
        return None
    return field.get_default


def rows_plan(serializer: serializers.Serializer) -> list[Column] | None:
    """The columns of `serializer`'s rows, or None when it does more than its fields and its
    validate() (field-level validate_<name> methods, serializer validators): then it checks
    every row itself."""
    fields = [f for f in serializer.fields.values() if not f.read_only]
    if serializer.validators or any(
        hasattr(serializer, f"validate_{f.field_name}") or f.source != f.field_name for f in fields
    ):
        return None
    return [
        Column(
            name=str(field.field_name),
            check=_check_of(field),
            required=field.required,
            default=_default_of(field),
            allow_null=field.allow_null,
        )
        for field in fields
    ]


def rows_checked(
    data: list[Any], *, serializer: serializers.Serializer, plan: list[Column]
) -> list[dict[str, Any]] | None:
    """Each item of `data` as `serializer` (the list's child) validates it, when every item
    passes as it is; None when any does not (the serializer then checks them and words the
    errors)."""
    names = frozenset(column.name for column in plan)
    rows = []
    try:
        for item in data:
            if type(item) is not dict or not names.issuperset(item):
                return None
            rows.append(serializer.validate(_row(item, plan)))
    except (NotPlain, serializers.ValidationError):
        return None
    return rows


def _row(item: dict[str, Any], plan: list[Column]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for column in plan:
        value = item.get(column.name, empty)
        if value is empty:
            if column.required:
                raise NotPlain
            if column.default is not None:
                row[column.name] = column.default()
        elif value is None:
            if not column.allow_null:
                raise NotPlain
            row[column.name] = None
        else:
            row[column.name] = column.check(value)
    return row


class PlainRowsListSerializer(serializers.ListSerializer):
    """A list of its child's rows, read by rows_checked when every row passes as it is, else by
    DRF item by item (the same rows, and the same errors). Bounds of the list (a list, not
    empty when not allowed, max_length, min_length) are DRF's."""

    def to_internal_value(self, data: Any) -> Any:
        child = self.child
        # ListSerializer sets these from its keyword arguments; the stubs do not know them.
        longest = getattr(self, "max_length", None)
        shortest = getattr(self, "min_length", None)
        if (
            isinstance(child, serializers.Serializer)
            and type(data) is list
            and data
            and len(data) <= (longest or len(data))
            and len(data) >= (shortest or 0)
        ):
            # The child's fields are fixed once built (and with_built_fields keeps them for
            # the thread's next requests): its plan is derived once.
            if "_rows_plan" not in self.__dict__:
                self.__dict__["_rows_plan"] = rows_plan(child)
            plan = self.__dict__["_rows_plan"]
            rows = None if plan is None else rows_checked(data, serializer=child, plan=plan)
            if rows is not None:
                return rows
        return super().to_internal_value(data)
