"""The `benchhub` command line: argument parsing and one function per subcommand.

Output that programs read (the verdict, `--format json`) goes to stdout; progress and errors go
to stderr. Exit statuses: benchhub_cli.errors (docs/cli.md)."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

from benchhub_cli import errors
from benchhub_cli.api import Api, Refused
from benchhub_cli.applying import apply_plan, schedule_files, schema_check, step_run
from benchhub_cli.comparing import comparison_fetch, runs_query, versions_query
from benchhub_cli.config import Settings, config_write, settings_resolve
from benchhub_cli.errors import CliError
from benchhub_cli.follow import job_follow, progress_text, runs_aggregated
from benchhub_cli.jobfile import jobfile_read, request_schema, unknown_fields
from benchhub_cli.trial import host_check, patches_read, recipes_define, trial_label, workload_of
from benchhub_cli.verdict import (
    FAIL_ON,
    FORMATS,
    Verdict,
    exit_status,
    inconclusive_levels,
    render,
    render_error,
)
from benchhub_runner.jobspec.plan import plan_default


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"benchhub: {exc}", file=sys.stderr)
        if exc.status != errors.OK:
            sys.stdout.write(
                render_error(
                    str(exc).strip(), fmt=getattr(args, "format", "text"), status=exc.status
                )
            )
        return exc.status
    except KeyboardInterrupt:
        print("benchhub: interrupted", file=sys.stderr)
        return errors.INTERRUPTED


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--retries", type=int, default=5, metavar="N",
        help="attempts per request before the server counts as unreachable",
    )  # fmt: skip
    common.add_argument(
        "--patience", type=float, default=600.0, metavar="S",
        help="seconds the server may be away while a job is followed",
    )  # fmt: skip
    verdicts = argparse.ArgumentParser(add_help=False)
    verdicts.add_argument("--format", choices=FORMATS, default="text")
    verdicts.add_argument("--fail-on", choices=FAIL_ON, default="slower",
                          help="which verdict (after Holm) makes the exit status 1")  # fmt: skip
    verdicts.add_argument("--threshold", type=float, help="practical threshold, percent")
    top = argparse.ArgumentParser(prog="benchhub", description="BenchHub from a terminal or CI")
    sub = top.add_subparsers(required=True, metavar="COMMAND")

    login = sub.add_parser("login", parents=[common], help="save the server and token")
    login.add_argument("--server", required=True)
    login.add_argument(
        "--token", help="a personal token (bhp_...); default: BENCHHUB_TOKEN or a prompt"
    )
    login.set_defaults(run=cmd_login)

    status = sub.add_parser("status", parents=[common], help="the queue and the agents")
    status.add_argument("--format", choices=("text", "json"), default="text")
    status.set_defaults(run=cmd_status)

    wait = sub.add_parser("wait", parents=[common, verdicts], help="follow a job to its verdict")
    wait.add_argument("job", type=int)
    wait.set_defaults(run=cmd_wait)

    compare = sub.add_parser("compare", parents=[common, verdicts], help="compare versions or runs")
    compare.add_argument("--host")
    compare.add_argument("--workload")
    compare.add_argument("--runs", nargs=2, metavar=("BASE_RUN", "OTHER_RUN"))
    compare.add_argument("versions", nargs="*", metavar="VERSION", help="BASE OTHER...")
    compare.set_defaults(run=cmd_compare)

    submit = sub.add_parser(
        "submit", parents=[common, verdicts], help="queue a job or schedule file"
    )
    submit.add_argument("file", type=Path)
    submit.add_argument("--wait", action="store_true", help="follow the job to its verdict")
    submit.set_defaults(run=cmd_submit)

    apply = sub.add_parser(
        "apply", parents=[common], help="make the server's schedules match a directory's files"
    )
    apply.add_argument("directory", type=Path, metavar="DIR")
    apply.add_argument(
        "--set", dest="file_set", metavar="NAME",
        help="the file set the schedules are kept in (default: the directory's name)",
    )  # fmt: skip
    apply.add_argument(
        "--prune", action="store_true", help="delete the set's schedules whose file is gone"
    )
    apply.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    apply.set_defaults(run=cmd_apply)

    trial = sub.add_parser(
        "try", parents=[common, verdicts], help="measure patches against a recipe or a git ref"
    )
    trial.add_argument("patches", nargs="+", type=Path, metavar="PATCH")
    trial.add_argument("--against", required=True, metavar="RECIPE-OR-REF")
    trial.add_argument(
        "--repo", metavar="URL", help="the repository of --against as a git ref (a bare ref: "
        "the server's git recipes' repository)",
    )  # fmt: skip
    trial.add_argument("--host", required=True)
    trial.add_argument("--workload", default="tpcb-like")
    trial.add_argument("--clients", default="1,8,32", type=_levels)
    trial.add_argument("--duration", type=float, default=30.0, metavar="S")
    trial.add_argument(
        "--repeats",
        type=int,
        default=plan_default("repeats"),
        help="repeats of each level (default: a job's, %(default)s)",
    )
    trial.add_argument("--scale", type=int, default=10)
    trial.add_argument("--label", help="the trial recipe's label (default: the patch files' names)")
    trial.add_argument(
        "--settle", action="store_true", help="queue more repeats of inconclusive levels"
    )
    trial.add_argument("--settle-rounds", type=int, default=2, metavar="N")
    trial.set_defaults(run=cmd_try)
    return top


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--clients: {text!r} is not a list of integers") from None
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError("--clients: give levels of 1 client or more, e.g. 1,8,32")
    return levels


def _api(args: argparse.Namespace, settings: Settings | None = None) -> Api:
    return Api(settings or settings_resolve(), attempts=max(1, args.retries))


def cmd_login(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("BENCHHUB_TOKEN", "")
    if not token and sys.stdin.isatty():
        token = getpass.getpass("personal token (bhp_...): ")
    if not token:
        raise CliError(
            "--token: give a personal token (made on the server's Tokens page, /account/tokens/)"
        )
    api = _api(args, Settings(server=args.server.rstrip("/"), token=token))
    api.call("GET", "/api/v1/status/")  # a refused token or an unreachable server stops here
    path = config_write(server=api.server, token=token)
    print(f"saved {api.server} in {path}")
    return errors.OK


def cmd_status(args: argparse.Namespace) -> int:
    body = _api(args).call("GET", "/api/v1/status/")
    if args.format == "json":
        print(json.dumps(body, indent=2))
        return errors.OK
    queue = body.get("queue") or {}
    print("queue: " + (", ".join(f"{n} {state}" for state, n in queue.items()) or "empty"))
    for job in body.get("active") or []:
        print("  " + progress_text(job))
    for host in body.get("hosts") or []:
        if host.get("agent") is False:  # runs were imported under its name; no agent calls in
            print(f"host {host['name']}: imported runs only, no agent")
            continue
        seen = host.get("seen_s_ago")
        when = "never seen" if seen is None else f"seen {seen:.0f} s ago"
        print(f"agent {host['name']}: {'online' if host.get('online') else 'offline'}, {when}")
    return errors.OK


def cmd_compare(args: argparse.Namespace) -> int:
    if args.runs:
        if args.versions or args.host or args.workload:
            raise CliError("--runs: give either --runs A B or --host, --workload and versions")
        query = runs_query(runs=list(args.runs), threshold=args.threshold)
    else:
        for option in ("host", "workload"):
            if not getattr(args, option):
                raise CliError(f"--{option}: required (or compare two runs with --runs A B)")
        if len(args.versions) < 2:
            raise CliError("versions: give the baseline and at least one version to compare")
        query = versions_query(
            host=args.host, workload=args.workload, versions=args.versions, threshold=args.threshold
        )
    return _report(comparison_fetch(_api(args), query), args)


def _report(verdict: Verdict, args: argparse.Namespace, *, status: int | None = None) -> int:
    if status is None:
        status = exit_status(verdict.body, fail_on=args.fail_on)
    sys.stdout.write(render(verdict, fmt=args.format, status=status))
    return status


def cmd_wait(args: argparse.Namespace) -> int:
    api = _api(args)
    job = job_follow(api, args.job, patience_s=args.patience)
    return _report(_job_comparison(api, job, args), args)


def _job_comparison(api: Api, job: dict[str, Any], args: argparse.Namespace) -> Verdict:
    """The comparison of a finished job's runs, once the server has aggregated them: by the
    versions they measured (a job's `13` measures `13.23`) on their host, so the repeats of
    other jobs of the same builds pool in, the job's first version the baseline; an A/A job's
    two runs by their UUIDs."""
    runs = runs_aggregated(api, job.get("runs") or [])
    runs.sort(key=lambda run: _version_place(run["version"], job["versions"]))
    versions = list(dict.fromkeys(run["version"] for run in runs))
    if len(runs) < 2:
        measured = "one run" if runs else "no run"
        raise CliError(f"job {job['id']} has {measured}: nothing to compare", status=errors.OK)
    if job.get("aa") or len(versions) < 2:
        uuids = [run["run_uuid"] for run in runs[:2]]
        return comparison_fetch(api, runs_query(runs=uuids, threshold=args.threshold))
    query = versions_query(
        host=runs[0]["host"], workload=runs[0]["workload"], versions=versions,
        threshold=args.threshold,
    )  # fmt: skip
    return comparison_fetch(api, query)


def _version_place(version: str, asked: list[str]) -> int:
    """Where a run's version stands among the job's: its own name, or the series it is of."""
    for place, name in enumerate(asked):
        if version == name or version.startswith(f"{name}."):
            return place
    return len(asked)


def cmd_submit(args: argparse.Namespace) -> int:
    api = _api(args)
    jobfile = jobfile_read(args.file)
    schema = api.call("GET", "/api/schema/?format=json")
    unknown = unknown_fields(jobfile.data, request_schema(schema, jobfile.endpoint), schema)
    if unknown:
        raise jobfile.error(unknown[0], "unknown field (the API's fields: docs/runner-api.md)")
    try:
        made = api.call("POST", jobfile.endpoint, jobfile.data)
    except Refused as exc:
        if exc.fields:
            field, why = next(iter(exc.fields.items()))
            raise jobfile.error(field, " ".join(why)) from None
        raise
    if jobfile.is_schedule:
        print(f"schedule {made['id']} {made['name']} saved ({made['crontab']}, UTC)")
        return errors.OK
    job_id = made["id"]
    print(f"queued job {job_id}: {api.page_url(f'/jobs/{job_id}/')}", file=sys.stderr)
    if not args.wait:
        print(made["id"])
        return errors.OK
    job = job_follow(api, made["id"], patience_s=args.patience)
    return _report(_job_comparison(api, job, args), args)


def cmd_apply(args: argparse.Namespace) -> int:
    file_set = args.file_set or args.directory.resolve().name
    if not file_set or len(file_set) > 100:
        raise CliError("--set: give the file set a name of 1 to 100 characters")
    files = schedule_files(args.directory)
    api = _api(args)
    schema_check(api, files)
    schedules = api.call("GET", "/api/v1/schedules/")
    plan = apply_plan(files=files, schedules=schedules, file_set=file_set, prune=args.prune)
    for step in plan.steps:
        print(step.line(), flush=True)
        if not args.dry_run:
            step_run(api, step)
    for name in plan.unpruned:
        print(f"benchhub: {name}: its file is gone; --prune deletes it", file=sys.stderr)
    done = "would change" if args.dry_run else "changed"
    print(
        f"benchhub: set {file_set}: {len(plan.steps)} {done}, {len(plan.unchanged)} unchanged",
        file=sys.stderr,
    )
    return errors.OK


def cmd_try(args: argparse.Namespace) -> int:
    api = _api(args)
    patches = patches_read(args.patches)
    host_check(api, args.host)
    workload = workload_of(api, args.workload)
    base, patched = recipes_define(
        api,
        against=args.against,
        repo=args.repo,
        label=args.label or trial_label(args.patches),
        patches=patches,
    )
    body = {
        "versions": [base, patched], "workload": workload, "host": args.host,
        "clients": args.clients, "duration_s": args.duration, "repeats": args.repeats,
        "scale": args.scale,
    }  # fmt: skip
    job_id = api.call("POST", "/api/v1/jobs/", body)["id"]
    page = api.page_url(f"/jobs/{job_id}/")
    print(f"queued job {job_id} ({patched} against {base}): {page}", file=sys.stderr)
    job = job_follow(api, job_id, patience_s=args.patience)
    verdict = _job_comparison(api, job, args)
    rounds = args.settle_rounds if args.settle else 0
    while rounds and inconclusive_levels(verdict.body):
        rounds -= 1
        settle = _settle(api, verdict)
        if settle is None:
            break
        # With one run a side the server queues separate jobs (`jobs`); every one must end
        # before the verdict is read again.
        for settle_id in settle.get("jobs") or [settle["id"]]:
            followed = job_follow(api, settle_id, patience_s=args.patience)
            runs_aggregated(api, followed.get("runs") or [])
        verdict = _job_comparison(api, job, args)
    status = exit_status(verdict.body, fail_on=args.fail_on)
    if status == errors.OK and args.settle and inconclusive_levels(verdict.body):
        status = errors.INCONCLUSIVE
    return _report(verdict, args, status=status)


def _settle(api: Api, verdict: Verdict) -> dict[str, Any] | None:
    query = verdict.permalink.split("?", 1)[1]
    try:
        job = api.call("POST", f"/api/v1/compare/settle/?{query}")
    except Refused as exc:
        if exc.http_status == 409:
            return None
        raise
    ids = [str(i) for i in job.get("jobs") or [job["id"]]]
    which = f"jobs {', '.join(ids)} measure" if len(ids) > 1 else f"job {ids[0]} measures"
    print(f"settling: {which} the inconclusive levels again", file=sys.stderr)
    return job  # type: ignore[no-any-return]


if __name__ == "__main__":
    sys.exit(main())
