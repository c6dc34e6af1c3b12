"""The base of every serializer that reads a request body: a key it has no field for is refused.

DRF drops keys a serializer does not declare. For a request that is a silent change of meaning:
`query_mode` sent beside `workload` instead of inside it was dropped and the job ran the default
(simple) mode. An InSerializer answers 400 naming each such key by its path in the request
(`query_mode`, `results[3].tpss`, `host.facts.coress`), with a hint when the key is a field one
level down (`workload.query_mode`) or a near spelling of one of its own. Nested InSerializers
check their own level, so a request is checked at every depth by the serializers that already
walk it: no second pass over the body. Free-form values (DictField, JSONField: workload params,
host extra, progress) are not fields and keep their keys.
"""

import difflib
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers


class InSerializer(serializers.Serializer):
    """A request body's serializer. Contract: to_internal_value raises ValidationError with
    `{key: ["Unknown field. ..."]}` for every key of the data that is not one of its writable
    fields, alongside the errors of the known fields (all of them in one answer)."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = self._unknown_fields(data)
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                exc.detail.update(unknown)
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value

    def _unknown_fields(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            return {}
        known = self._known_fields()
        if known.issuperset(data):
            return {}
        return {
            str(key): [self._unknown_message(str(key), known)] for key in data if key not in known
        }

    def _known_fields(self) -> frozenset[str]:
        known = self.__dict__.get("_known")
        if known is None:
            known = frozenset(name for name, field in self.fields.items() if not field.read_only)
            self.__dict__["_known"] = known
        return known

    def _unknown_message(self, key: str, known: frozenset[str]) -> str:
        inside = [
            name
            for name in sorted(known)
            if key in getattr(_nested(self.fields[name]), "fields", {})
        ]
        if inside:
            return f"Unknown field here; it belongs under {inside[0]} ({inside[0]}.{key})."
        close = difflib.get_close_matches(key, known, n=1)
        if close:
            return f"Unknown field; did you mean {close[0]}?"
        return "Unknown field."


def _nested(field: serializers.Field) -> serializers.Field:
    """The serializer a field holds: itself, or the child of a list of them."""
    return getattr(field, "child", None) or field
