"""GET /api/v1/compare/: the comparison table and its verdicts as JSON, or CSV with `format=csv`
or `Accept: text/csv`; POST /api/v1/compare/settle/: queue more runs or repeats of its
inconclusive levels. Same query parameters as the Compare page (compare.serializers)."""

import json
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import renderers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.permissions import IsPerson
from benchhub.compare.selectors.comparisons import comparison_get
from benchhub.compare.selectors.shown import comparison_show
from benchhub.compare.serializers import CompareQuerySerializer, permalink_query, query_params
from benchhub.compare.services import comparison_settle
from benchhub.compare.shown_data import comparison_csv, comparison_data
from benchhub.jobs.selectors import job_get
from benchhub.jobs.serializers import JobDetailOutSerializer


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
    version's median tps and change against the baseline in percent, and its latency p50, p90
    and p99 (ms, the median over the set's repeats of the sampled transaction log's, null
    without one); per series its `knee` (the level past which tps stops growing, its tps and
    the rule that fired; null when tps grows up to the largest level); under "verdicts", for each
    version against the baseline, the sentence on the whole curve (Holm-corrected counts,
    geometric-mean ratio with its 95% interval) and per level the tps and latency ratios with
    95% intervals, the verdict (faster, slower, same within the threshold, inconclusive), the
    Mann-Whitney p and Cliff's delta from 4 repeats a side, and for an inconclusive level the
    repeats a side likely to settle it, and the interval's units (`interval_unit`: run_means,
    repeats_in_one_job or pairs_in_one_job, with the page's words) and method
    (`interval_method`: paired or unpaired); "noise" says what the host lets these repeats see;
    each version's peak; the differences between the runs; under "presentation" the tables of
    the workload's presentation; and under "why" the Compare page's why section (at `why`
    clients, else the level the verdicts pick), or null without a compared level.
    docs/statistics.md describes the method."""

    renderer_classes = [renderers.JSONRenderer, CsvRenderer]

    @extend_schema(parameters=[CompareQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        query = CompareQuerySerializer(data=query_params(request.query_params))
        query.is_valid(raise_exception=True)
        shown = comparison_show(
            selection=query.selection(), threshold=query.threshold_fraction, why=query.why_level
        )
        if request.accepted_renderer.format == "csv":
            response = Response(comparison_csv(shown))
            response["Content-Disposition"] = 'attachment; filename="benchhub-compare.csv"'
            return response
        return Response(comparison_data(shown))


class CompareSettleView(APIView):
    """Settle it: queue more measurements of the comparison's inconclusive levels (after Holm,
    at the threshold given), for the baseline and the versions concerned, on the baseline run's
    host with the same builds, workload, length and configuration: separate jobs where a level's
    interval has one run a side, else one job with more repeats. The query parameters are the
    comparison's, as for GET /api/v1/compare/. 201 with the first job, `jobs` listing the ids
    of every job queued; 409 `nothing_to_settle` when every level has a verdict."""

    permission_classes = [IsPerson]

    @extend_schema(
        parameters=[CompareQuerySerializer], request=None, responses={201: JobDetailOutSerializer}
    )
    def post(self, request: Request) -> Response:
        query = CompareQuerySerializer(data=query_params(request.query_params))
        query.is_valid(raise_exception=True)
        jobs = comparison_settle(
            comparison=comparison_get(**query.selection()),
            threshold=query.threshold_fraction,
            created_by=request.user,
            permalink=permalink_query(query.validated_data),
        )
        body = dict(JobDetailOutSerializer(job_get(job_id=jobs[0].pk)).data)
        body["jobs"] = [job.pk for job in jobs]
        return Response(body, status=201)
