"""`manage.py bisection_create`: start a bisection from the command line."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchhub.bisections.serializers import BisectionInSerializer
from benchhub.bisections.services import bisection_start


class Command(BaseCommand):
    help = (
        "Start a bisection: --recipe master --good REL_15_0 --bad master --host bench-01 "
        "--clients 8 --duration 30 [--builtin select-only | --catalog ID] [--scale 10] "
        "[--repeats 3] [--max-repeats 9] [--change 0.92] [--set name=value]; or from two runs "
        "(--runs GOOD_UUID BAD_UUID) or a regression (--regression ID), which give every other "
        "field unless it is given"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--recipe", help="a git recipe, by name")
        parser.add_argument("--good", help="a commit, tag or branch")
        parser.add_argument("--bad")
        parser.add_argument("--host")
        parser.add_argument("--runs", nargs=2, metavar=("GOOD", "BAD"), help="two runs' uuids")
        parser.add_argument("--regression", type=int, metavar="ID")
        parser.add_argument("--clients", type=int)
        parser.add_argument("--duration", type=float, help="pgbench -T, s")
        parser.add_argument("--builtin", help="default select-only, unless from runs")
        parser.add_argument("--catalog", metavar="ID", help="a catalog workload instead")
        parser.add_argument("--scale", type=int)
        parser.add_argument("--repeats", type=int, default=3)
        parser.add_argument("--max-repeats", type=int, default=9)
        parser.add_argument("--change", type=float, help="bad / good in tps; default: measured")
        parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")

    def handle(self, *args: Any, **options: Any) -> None:
        from_origin = bool(options["runs"] or options["regression"])
        body: dict[str, Any] = {
            "repeats": options["repeats"],
            "max_repeats": options["max_repeats"],
        }
        for name in ("recipe", "good", "bad", "host", "clients", "regression", "scale", "change"):
            if options[name] is not None:
                body[name] = options[name]
        if options["runs"]:
            body["good_run"], body["bad_run"] = options["runs"]
        if options["duration"] is not None:
            body["duration_s"] = options["duration"]
        if options["catalog"]:
            body["workload"] = {"catalog": options["catalog"]}
        elif options["builtin"] or not from_origin:
            builtin = options["builtin"] or "select-only"
            body["workload"] = {"name": builtin, "builtin": builtin}
        if options["set"] or not from_origin:
            body["config_overrides"] = dict(
                item.split("=", 1) for item in options["set"] if "=" in item
            )
        request = BisectionInSerializer(data=body)
        if not request.is_valid():
            raise CommandError(json.dumps(request.errors, indent=2))
        found = request.validated_data
        bisection = bisection_start(found, actor="manage.py bisection_create")
        self.stdout.write(str(bisection.pk))
