"""`manage.py job_create`: queue a job from the command line (the API's JSON, or flags)."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_create


class Command(BaseCommand):
    help = (
        "Queue a job. Either --json FILE with the body POST /api/v1/jobs/ takes, or flags, e.g. "
        "--versions 13 14 --builtin select-only --scale 1 --clients 1 2 4 --duration 10"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", help="a file with the job as JSON ('-' for stdin)")
        parser.add_argument("--versions", nargs="+")
        parser.add_argument("--builtin", default="select-only")
        parser.add_argument("--query-mode", default="prepared")
        parser.add_argument("--scale", type=int)
        parser.add_argument("--clients", nargs="+", type=int)
        parser.add_argument("--duration", type=float)
        parser.add_argument("--transactions", type=int)
        parser.add_argument("--repeats", type=int, default=1)
        parser.add_argument("--host")
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
            source = self.stdin if options["json"] == "-" else open(options["json"])
            with source:
                return json.load(source)
        overrides = dict(item.split("=", 1) for item in options["set"] if "=" in item)
        body: dict[str, Any] = {
            "versions": options["versions"] or [],
            "workload": {
                "name": options["builtin"],
                "builtin": options["builtin"],
                "query_mode": options["query_mode"],
            },
            "clients": options["clients"] or [],
            "repeats": options["repeats"],
            "priority": options["priority"],
            "order": "sequential" if options["sequential"] else "interleaved",
            "config_overrides": overrides,
        }
        for key, option in (
            ("scale", "scale"),
            ("duration_s", "duration"),
            ("transactions_per_client", "transactions"),
            ("host", "host"),
        ):
            if options[option] is not None:
                body[key] = options[option]
        return body
