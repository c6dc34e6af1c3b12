"""The runs API: upload, list, detail, results. Views parse, call one service or selector, shape."""

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchhub.api.errors import error_response
from benchhub.api.pagination import CreatedCursorPagination
from benchhub.api.permissions import IsAuthenticatedOrReadOnly, IsPerson, is_runner, request_person
from benchhub.api.serializers import with_built_fields
from benchhub.hosts.authentication import request_runner_token
from benchhub.querystrings import flag
from benchhub.results import imports, selectors, services
from benchhub.results.import_serializers import (
    ImportOutputsInSerializer,
    ImportSummaryInSerializer,
    summary_facts,
    summary_workload,
)
from benchhub.results.sample_pages import (
    SAMPLE_PAGE_MAX,
    SamplePageInSerializer,
    SamplePageOutSerializer,
    samples_page_out,
)
from benchhub.results.serializers import (
    ResultOutSerializer,
    RunDetailOutSerializer,
    RunFilterSerializer,
    RunOutSerializer,
    RunUploadSerializer,
    result_evidence_out,
)


class RunsView(APIView):
    """GET lists runs (newest first, cursor-paginated); POST uploads one complete run."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    pagination_class = CreatedCursorPagination
    token_scopes = {"POST": "import"}

    @extend_schema(parameters=[RunFilterSerializer], responses=RunOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = RunFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        runs = selectors.run_list(filters=filters.validated_data)
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response(RunOutSerializer(page, many=True).data)

    @extend_schema(
        request=RunUploadSerializer, responses={200: RunOutSerializer, 201: RunOutSerializer}
    )
    def post(self, request: Request) -> Response:
        upload = with_built_fields(RunUploadSerializer, data=request.data)
        upload.is_valid(raise_exception=True)
        submission = services.run_submit(
            data=upload.validated_data,
            digest=services.payload_digest(request.data),
            runner_token=request_runner_token(request) if is_runner(request) else None,
            user=None if is_runner(request) else request_person(request),
        )
        # A new run holds its host, build, facts, config and workload in memory, and a stored one
        # was read with them (selectors.run_get): no second read.
        created = submission.created
        return Response(
            with_built_fields(RunOutSerializer, instance=submission.run).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class RunDetailView(APIView):
    @extend_schema(responses=RunDetailOutSerializer)
    def get(self, request: Request, run_uuid: str) -> Response:
        run = selectors.run_get(run_uuid=run_uuid)
        if run is None:
            return error_response("not_found", f"No run {run_uuid}.", status.HTTP_404_NOT_FOUND)
        return Response(RunDetailOutSerializer(run).data)


class RunResultsView(APIView):
    """GET: the run's results; with `progress`, a page of its per-second samples with them
    (sample_pages.py: `offset`, `limit` up to SAMPLE_PAGE_MAX, `count`, `next`, `previous`)."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "progress",
                bool,
                description="a page of the per-second samples (progress, telemetry) and the head "
                "of each result's raw pgbench output (`raw_output_chars`, `raw_output_url`): the "
                "body is then {count, next, previous, results}",
            ),
            OpenApiParameter(
                "offset", int, description="with progress: the first sample of the page"
            ),
            OpenApiParameter(
                "limit",
                int,
                description=f"with progress: samples a page, at most {SAMPLE_PAGE_MAX}",
            ),
            OpenApiParameter(
                "evidence", bool, description="include each result's evidence (or null)"
            ),
        ],
        responses=PolymorphicProxySerializer(
            component_name="RunResults",
            serializers=[ResultOutSerializer(many=True), SamplePageOutSerializer],
            resource_type_field_name=None,
            # Said, so that the list among the shapes is read as one (drf-spectacular W001).
            many=False,
        ),
    )
    def get(self, request: Request, run_uuid: str) -> Response:
        run = selectors.run_get(run_uuid=run_uuid)
        if run is None:
            return error_response("not_found", f"No run {run_uuid}.", status.HTTP_404_NOT_FOUND)
        with_progress = flag(request.query_params.get("progress"))
        with_evidence = flag(request.query_params.get("evidence"))
        page = SamplePageInSerializer(data=request.query_params)
        if with_progress:
            page.is_valid(raise_exception=True)
        # A page of samples is sliced in the database and its outputs' heads cut there
        # (sample_pages.py), so neither the series nor the outputs are joined here.
        results = list(
            selectors.result_list(run=run, with_progress=False, with_evidence=with_evidence)
        )
        if with_progress:
            body = samples_page_out(request, results, run_uuid=str(run.uuid), **page.validated_data)
            rows = body["results"]
        else:
            body = rows = ResultOutSerializer(results, many=True).data
        if with_evidence:
            by_level = {(r.clients, r.repeat): r for r in results}
            for row in rows:
                row["evidence"] = result_evidence_out(by_level[(row["clients"], row["repeat"])])
        return Response(body)


class ImportOutputsView(APIView):
    """POST: pgbench outputs, as pasted, become one imported run (201), or 400 `incomplete`
    naming what the text lacks (`version`, `workload`, `outputs[i].clients`) with `read`."""

    permission_classes = [IsPerson]

    @extend_schema(request=ImportOutputsInSerializer, responses={201: RunOutSerializer})
    def post(self, request: Request) -> Response:
        body = ImportOutputsInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        outputs = data["outputs"]
        run = imports.run_import_outputs(
            texts=[(o.get("name") or f"output {n}", o["text"]) for n, o in enumerate(outputs)],
            clients=[o.get("clients") for o in outputs],
            version=data.get("version", ""),
            workload=data.get("workload", ""),
            host=data["host"],
            config_text=data.get("config", ""),
            lscpu=data.get("lscpu", ""),
            note=data.get("note", ""),
            user=request_person(request),
        )
        return Response(RunOutSerializer(run).data, status=status.HTTP_201_CREATED)


class ImportSummaryView(APIView):
    """POST: a published table becomes one summary run per chosen version (201, the runs), or
    400 `incomplete` naming `clients_column` and `columns` with the table's headers and a guess,
    or `filter` with the values of a label column when the table mixes models or workloads."""

    permission_classes = [IsPerson]

    @extend_schema(request=ImportSummaryInSerializer, responses={201: RunOutSerializer(many=True)})
    def post(self, request: Request) -> Response:
        body = ImportSummaryInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        columns = data.get("columns")
        runs = imports.runs_import_summary(
            table_text=data["table"],
            clients_column=data.get("clients_column"),
            version_columns=[(c["column"], c.get("version", "")) for c in columns]
            if columns
            else None,
            filter_value=data.get("filter", ""),
            host=data["host"],
            facts=summary_facts(data),
            workload=summary_workload(data),
            scale=data.get("scale"),
            duration_s=data.get("duration_s"),
            note=data.get("note", ""),
            user=request_person(request),
        )
        return Response(RunOutSerializer(runs, many=True).data, status=status.HTTP_201_CREATED)
