"""The API's field of each measurement plan field (benchhub_runner.jobspec.plan), made from its
spec: bounds, default, nullability and help. A job request takes every plan field so
(jobs.serializers.PlanInSerializer); a run's upload the ones a run records, with its own wider
bounds (results.serializers.RunUploadSerializer)."""

from typing import Any

from benchhub_runner.jobspec.plan import MAX_LEVELS, Spec, plan_default
from rest_framework import serializers

from benchhub.api.fields import (
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StringMapField,
)


def plan_field(
    name: str, spec: Spec, *, choices: list[Any] | None = None, max_levels: int = MAX_LEVELS
) -> serializers.Field:
    """The API's field of plan field `name`, as `spec` says: bounds (none past the integer
    column's range when `spec.maximum` is None), default, help. A choice takes `choices` (the
    model column's, whose labels the schema shows); a list of levels holds at most
    `max_levels`."""
    help_text = spec.help or None
    if spec.kind == "levels":
        child = StrictIntegerField(min_value=1, **_maximum(spec))
        return serializers.ListField(
            child=child, min_length=1, max_length=max_levels, help_text=help_text
        )
    if spec.kind in ("count", "seconds"):
        return _number(name, spec, kind=spec.kind, help_text=help_text)
    if spec.kind == "choice":
        return serializers.ChoiceField(
            choices=choices or [], default=plan_default(name), help_text=help_text
        )
    if spec.kind == "text":
        return StrictCharField(
            max_length=_bound(spec.maximum),
            required=False,
            allow_blank=True,
            default="",
            help_text=help_text,
        )
    if spec.kind in ("level_counts", "level_seconds"):
        value = _number(name, spec, kind=spec.kind)
        return serializers.DictField(child=value, required=False, default=dict, help_text=help_text)
    if spec.kind == "settings":
        return StringMapField(required=False, default=dict, max_items=_bound(spec.maximum))
    raise ValueError(f"No API field for plan field {name} of kind {spec.kind!r}.")


def _bound(value: float | None) -> int:
    return int(value or 0)


def _maximum(spec: Spec) -> dict[str, Any]:
    # Without one, the field's own bound: the integer column's range.
    return {} if spec.maximum is None else {"max_value": spec.maximum}


def _number(name: str, spec: Spec, *, kind: str, help_text: str | None = None) -> serializers.Field:
    """A count or a number of seconds: a field's own, or each value of a level map (required)."""
    options: dict[str, Any] = {"min_value": spec.minimum, **_maximum(spec)}
    if kind in ("count", "seconds") and spec.nullable:
        options.update(required=False, allow_null=True)
    elif kind in ("count", "seconds"):
        options["default"] = plan_default(name)
    if help_text:
        options["help_text"] = help_text
    if kind in ("count", "level_counts"):
        return StrictIntegerField(**options)
    return StrictFloatField(**options)
