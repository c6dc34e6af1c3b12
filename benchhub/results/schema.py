"""What the OpenAPI schema needs to know about the results app's own serializer fields.

Imported by ResultsConfig.ready(): drf-spectacular registers an extension when its class is
defined.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import build_array_type, build_basic_type
from drf_spectacular.types import OpenApiTypes

from benchhub.api.fields import RecordListField
from benchhub.results.evidence_serializers import PARTS, EvidenceField

KINDS = {"float": OpenApiTypes.FLOAT, "int": OpenApiTypes.INT, "str": OpenApiTypes.STR}


def _basic(kind: OpenApiTypes) -> dict:
    schema = build_basic_type(kind)
    assert schema is not None  # None only for OpenApiTypes.NONE
    return schema


def _value_schema(kind: str) -> dict:
    if kind in KINDS:
        return _basic(KINDS[kind])
    # "int|str"
    return {"oneOf": [_basic(OpenApiTypes.INT), _basic(OpenApiTypes.STR)]}


class RecordListFieldSchema(OpenApiSerializerFieldExtension):
    """RecordListField: a list of flat records of fixed key types."""

    target_class = RecordListField

    def map_serializer_field(self, auto_schema: object, direction: str) -> dict:
        spec = self.target.spec
        properties = {key: _value_schema(kind) for key, (kind, _, _) in spec.items()}
        required = [key for key, (_, needed, _) in spec.items() if needed]
        item = {"type": "object", "properties": properties, "required": required}
        return {**build_array_type(item), "maxItems": self.target.max_items}


class EvidenceFieldSchema(OpenApiSerializerFieldExtension):
    """EvidenceField: an object of optional parts (docs/runner-api.md, "Evidence"), or null."""

    target_class = EvidenceField

    def map_serializer_field(self, auto_schema: object, direction: str) -> dict:
        parts = {
            part: {"type": "array" if part == "statements" else "object", "nullable": True}
            for part in PARTS
        }
        return {
            "type": "object",
            "nullable": True,
            "properties": parts,
            "additionalProperties": False,
            "description": "what explains the result; see docs/runner-api.md, Evidence",
        }
