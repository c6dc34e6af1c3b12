"""GET /api/v1/compare/: the comparison table as JSON, or CSV with `format=csv` or
`Accept: text/csv`. Same query parameters as the Compare page (compare.serializers)."""

import json
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import renderers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.compare.presentations import presentation_data
from benchhub.compare.selectors import comparison_get
from benchhub.compare.serializers import CompareQuerySerializer, query_params
from benchhub.compare.tables import comparison_csv, comparison_data


class CsvRenderer(renderers.BaseRenderer):
    """Renders a comparison's CSV text as is; error bodies (dicts) as JSON text."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, str):
            return data.encode()
        return json.dumps(data).encode()


class CompareView(APIView):
    """The comparison of versions (or runs) of a workload on a host: per client level each
    version's median tps, change against the baseline (the first) in percent and whether it is
    beyond the run-to-run spread; each version's peak; the differences between the runs; and
    under "presentation" the tables of the workload's presentation (an improvement table,
    each stream's figures, connections against tps, or tps with the OS evidence)."""

    renderer_classes = [renderers.JSONRenderer, CsvRenderer]

    @extend_schema(parameters=[CompareQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        query = CompareQuerySerializer(data=query_params(request.query_params))
        query.is_valid(raise_exception=True)
        comparison = comparison_get(**query.selection())
        if request.accepted_renderer.format == "csv":
            response = Response(comparison_csv(comparison))
            response["Content-Disposition"] = 'attachment; filename="benchhub-compare.csv"'
            return response
        data = comparison_data(comparison)
        data["presentation"] = presentation_data([comparison] if comparison.series else [])
        return Response(data)
