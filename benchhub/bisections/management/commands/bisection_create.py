"""`manage.py bisection_create`: start a bisection from the command line."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchhub.bisections.serializers import BisectionInSerializer
from benchhub.bisections.services import bisection_create


class Command(BaseCommand):
    help = (
        "Start a bisection: --recipe master --good REL_15_0 --bad master --host bench-01 "
        "--clients 8 --duration 30 [--builtin select-only | --catalog ID] [--scale 10] "
        "[--repeats 3] [--max-repeats 9] [--change 0.92] [--set name=value]"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--recipe", required=True, help="a git recipe, by name")
        parser.add_argument("--good", required=True, help="a commit, tag or branch")
        parser.add_argument("--bad", required=True)
        parser.add_argument("--host", required=True)
        parser.add_argument("--clients", type=int, required=True)
        parser.add_argument("--duration", type=float, required=True, help="pgbench -T, s")
        parser.add_argument("--builtin", default="select-only")
        parser.add_argument("--catalog", metavar="ID", help="a catalog workload instead")
        parser.add_argument("--scale", type=int)
        parser.add_argument("--repeats", type=int, default=3)
        parser.add_argument("--max-repeats", type=int, default=9)
        parser.add_argument("--change", type=float, help="bad / good in tps; default: measured")
        parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")

    def handle(self, *args: Any, **options: Any) -> None:
        workload: dict[str, Any] = (
            {"catalog": options["catalog"]}
            if options["catalog"]
            else {"name": options["builtin"], "builtin": options["builtin"]}
        )
        body: dict[str, Any] = {
            "recipe": options["recipe"],
            "good": options["good"],
            "bad": options["bad"],
            "host": options["host"],
            "clients": options["clients"],
            "duration_s": options["duration"],
            "workload": workload,
            "repeats": options["repeats"],
            "max_repeats": options["max_repeats"],
            "change": options["change"],
            "config_overrides": dict(item.split("=", 1) for item in options["set"] if "=" in item),
        }
        if options["scale"] is not None:
            body["scale"] = options["scale"]
        request = BisectionInSerializer(data=body)
        if not request.is_valid():
            raise CommandError(json.dumps(request.errors, indent=2))
        found = request.validated_data
        bisection = bisection_create(
            recipe=found["recipe"],
            good=found["good"],
            bad=found["bad"],
            job=found["job"],
            repeats=found["repeats"],
            max_repeats=found["max_repeats"],
            change=found["change"],
            actor="manage.py bisection_create",
        )
        self.stdout.write(str(bisection.pk))
