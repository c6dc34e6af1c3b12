"""What the OpenAPI schema needs to know about BenchHub's own API classes."""

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.plumbing import (
    build_array_type,
    build_basic_type,
    build_bearer_security_scheme_object,
)
from drf_spectacular.types import OpenApiTypes

EITHER = {"oneOf": [build_basic_type(OpenApiTypes.INT), build_basic_type(OpenApiTypes.STR)]}
KINDS = {"float": OpenApiTypes.FLOAT, "int": OpenApiTypes.INT, "str": OpenApiTypes.STR}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """`Authorization: Bearer bhr_…` (agents) or `bhp_…` (people's scripts)."""

    target_class = "benchhub.api.authentication.TokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: object) -> dict:
        return build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix="Bearer",  # noqa: S106 - the scheme's name, not a secret
        )


class RecordListFieldSchema(OpenApiSerializerFieldExtension):
    """results.serializers.RecordListField: a list of flat records of fixed key types."""

    target_class = "benchhub.results.serializers.RecordListField"

    def map_serializer_field(self, auto_schema: object, direction: str) -> dict:
        properties = {}
        for key, (kind, _, _) in self.target.spec.items():
            if kind in KINDS:
                properties[key] = build_basic_type(KINDS[kind])
            else:  # "int|str"
                properties[key] = {
                    "oneOf": [
                        build_basic_type(OpenApiTypes.INT),
                        build_basic_type(OpenApiTypes.STR),
                    ]
                }
        required = [key for key, (_, needed, _) in self.target.spec.items() if needed]
        item = {"type": "object", "properties": properties, "required": required}
        return {**build_array_type(item), "maxItems": self.target.max_items}
