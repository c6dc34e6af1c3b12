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
import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from rest_framework import serializers
from rest_framework.fields import empty


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


S = TypeVar("S", bound=serializers.Serializer)

# Per thread: each request-serving thread has its own field trees, so no two requests validate
# through the same field objects at once.
_trees = threading.local()


def with_built_fields(serializer_class: type[S], *, data: Any = empty, instance: Any = None) -> S:
    """`serializer_class(instance, data=data)` whose fields are the tree this thread built the
    first time.

    DRF deep-copies a serializer's declared fields for every instance, and every nested
    serializer's again when it is first validated: for an upload (a run, its host, build,
    configuration, workload and a list of results, some 200 fields) that was an eighth of
    the request's CPU (bench/, ingest). A field keeps no state between validations, and the
    tree is built from an instance without data or context, so it reads as a fresh one does
    (root.partial False, context empty). Only for serializers that read nothing from their
    context: the fields' root is the thread's first, data-less instance. An answer's
    serializer (`instance`) reuses its tree too: a ModelSerializer maps its model's fields
    again for every instance.
    """
    trees = _trees.__dict__.setdefault("trees", {})
    fields = trees.get(serializer_class)
    if fields is None:
        fields = trees[serializer_class] = serializer_class().fields
    serializer = serializer_class(instance, data=data)
    serializer.__dict__["fields"] = fields  # the cached_property's own slot
    return serializer
