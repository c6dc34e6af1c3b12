"""`manage.py job_create`: queue a job from the command line (the API's JSON, or flags)."""

import json
import sys
from typing import Any

from benchhub_runner.jobspec.plan import QUERY_MODE_DEFAULT, plan_default
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.exceptions import ValidationError

from benchhub.api.errors import flatten_errors
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_create
from benchhub.workloads.catalog import params_from_text


class Command(BaseCommand):
    help = (
        "Queue a job. Either --json FILE with the body POST /api/v1/jobs/ takes, or flags, e.g. "
        "--versions 13 14 --builtin select-only --scale 1 --clients 1 2 4 --duration 10, or "
        "--versions 13 14 --catalog e1-pk-lookup --param rows=1000000 (omitted job flags take "
        "the entry's defaults)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", help="a file with the job as JSON ('-' for stdin)")
        parser.add_argument("--versions", nargs="+")
        parser.add_argument("--builtin", default="select-only")
        parser.add_argument("--query-mode", default=QUERY_MODE_DEFAULT)
        parser.add_argument("--catalog", metavar="ID", help="a catalog workload (see /workloads/)")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a param of the catalog workload; repeatable",
        )
        parser.add_argument("--scale", type=int)
        parser.add_argument("--clients", nargs="+", type=int)
        parser.add_argument("--duration", type=float)
        parser.add_argument("--transactions", type=int)
        parser.add_argument("--repeats", type=int)
        parser.add_argument("--host")
        parser.add_argument(
            "--host-tags",
            nargs="+",
            metavar="TAG",
            help="with no --host: any host whose agent offers all these tags runs the job",
        )
        parser.add_argument(
            "--tablespaces",
            nargs="+",
            metavar="NAME",
            help="tablespace names the host's agent offers ([tablespaces] in its config)",
        )
        parser.add_argument("--priority", type=int, default=0)
        parser.add_argument("--sequential", action="store_true")
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a postgresql.conf override; repeatable",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        body = self._body(options)
        request = JobInSerializer(data=body)
        if not request.is_valid():
            raise CommandError(json.dumps(request.errors, indent=2))
        job = job_create(actor="manage.py job_create", **request.validated_data)
        self.stdout.write(str(job.pk))

    def _body(self, options: dict[str, Any]) -> dict[str, Any]:
        if options["json"]:
            source = sys.stdin if options["json"] == "-" else open(options["json"])
            with source:
                return json.load(source)
        overrides = dict(item.split("=", 1) for item in options["set"] if "=" in item)
        body: dict[str, Any] = {
            "versions": options["versions"] or [],
            "priority": options["priority"],
            "order": "sequential" if options["sequential"] else "interleaved",
        }
        if options["catalog"]:
            body["workload"] = self._catalog(options["catalog"], options["param"])
            if overrides:
                body["config_overrides"] = overrides
        else:
            body["workload"] = {
                "name": options["builtin"],
                "builtin": options["builtin"],
                "query_mode": options["query_mode"],
            }
            body.update(clients=[], repeats=plan_default("repeats"), config_overrides=overrides)
        for key, option in (
            ("clients", "clients"),
            ("repeats", "repeats"),
            ("scale", "scale"),
            ("duration_s", "duration"),
            ("transactions_per_client", "transactions"),
            ("host", "host"),
            ("host_tags", "host_tags"),
            ("tablespaces", "tablespaces"),
        ):
            if options[option] is not None:
                body[key] = options[option]
        if options["transactions"] is not None and options["duration"] is None:
            body["duration_s"] = None  # the entry's duration would clash with --transactions
        return body

    def _catalog(self, entry_id: str, params: list[str]) -> dict[str, Any]:
        try:
            values = params_from_text(entry_id=entry_id, text="\n".join(params))
        except ValidationError as exc:
            raise CommandError(json.dumps(flatten_errors(exc.detail), indent=2)) from None
        return {"catalog": entry_id, "params": values}
