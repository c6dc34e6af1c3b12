"""The `benchhub` command's pure parts: where a field is written in a job file, which fields a
schema does not define, the exit status a comparison calls for, the login file, a trial's label,
a git ref's base. Its commands against a live server: benchhub/tests/test_cli_benchhub.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path

import pytest

from benchhub_cli.applying import apply_plan
from benchhub_cli.config import config_write, settings_resolve
from benchhub_cli.errors import CliError
from benchhub_cli.follow import progress_text
from benchhub_cli.jobfile import field_line, jobfile_read, unknown_fields
from benchhub_cli.main import parser
from benchhub_cli.refs import ref_base, ref_name
from benchhub_cli.trial import trial_label
from benchhub_cli.verdict import exit_status, inconclusive_levels, render_error
from benchhub_runner.job.steps import Step
from benchhub_runner.jobspec.plan import plan_default
from benchhub_runner.servers.versions import version_parse

TOML = """\
versions = ["13", "14"]
clients = [1, 2]
workload.query_mode = "simple"

[workload]
name = "select-only"
options = ["-M", "simple"]

[[workload.streams]]
name = "a"
"""

JSON = """{
  "versions": ["13"],
  "workload": {
    "name": "select-only",
    "options": []
  },
  "options": 1
}"""


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("clients", 2),
        ("clients[1]", 2),
        ("workload", 5),
        ("workload.options", 7),
        ("workload.streams[0].name", 10),
        ("workload.query_mode", 3),
        ("nowhere", None),
    ],
)
def test_it_finds_the_line_of_a_field_in_toml(field, line):
    assert field_line(TOML, field, toml=True) == line


def test_it_finds_the_line_of_a_nested_field_in_json_after_its_parent():
    assert field_line(JSON, "workload.options", toml=False) == 5
    assert field_line(JSON, "options", toml=False) == 5  # the first written; no parent to follow
    assert field_line(JSON, "versions", toml=False) == 2


SCHEMA = {
    "components": {
        "schemas": {
            "Job": {
                "type": "object",
                "properties": {
                    "clients": {"type": "array", "items": {"type": "integer"}},
                    "workload": {"$ref": "#/components/schemas/Workload"},
                    "config_overrides": {"type": "object", "additionalProperties": {}},
                },
            },
            "Workload": {
                "oneOf": [{"$ref": "#/components/schemas/W1"}, {"properties": {"catalog": {}}}]
            },
            "W1": {"properties": {"name": {}, "streams": {"items": {"properties": {"role": {}}}}}},
        }
    }
}


def test_it_names_each_field_the_schema_does_not_define():
    job = {
        "clients": [1],
        "config_overrides": {"anything": "goes"},
        "workload": {
            "name": "x",
            "catalog": "e1",
            "params": {},
            "streams": [{"role": "m", "rol": 1}],
        },
        "repeat": 3,
    }
    node = {"$ref": "#/components/schemas/Job"}
    assert unknown_fields(job, node, SCHEMA) == [
        "workload.params",
        "workload.streams[0].rol",
        "repeat",
    ]


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "job.json"
    bad.write_text('{\n  "versions": ["13"],\n  "clients": [1,]\n}')
    with pytest.raises(CliError) as caught:
        jobfile_read(bad)
    assert str(caught.value).startswith(f"{bad}:3: not valid JSON")
    other = tmp_path / "job.yaml"
    other.write_text("versions: [13]")
    with pytest.raises(CliError, match=r"ends in \.toml or \.json"):
        jobfile_read(other)


def comparison(*verdicts: str) -> dict:
    levels = [{"clients": c, "verdict_holm": v} for c, v in zip((1, 8, 32), verdicts, strict=False)]
    return {"verdicts": [{"label": "b", "levels": levels}]}


@pytest.mark.parametrize(
    ("verdicts", "fail_on", "status"),
    [
        (("same", "slower"), "slower", 1),
        (("same", "faster"), "slower", 0),
        (("same", "faster"), "change", 1),
        (("slower", "slower"), "never", 0),
        (("same", "inconclusive"), "change", 0),
    ],
)
def test_the_exit_status_follows_the_verdicts_after_holm(verdicts, fail_on, status):
    assert exit_status(comparison(*verdicts), fail_on=fail_on) == status


def test_it_lists_the_inconclusive_levels():
    assert inconclusive_levels(comparison("inconclusive", "same", "inconclusive")) == [1, 32]


def test_the_login_file_is_private_whatever_the_umask(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("BENCHHUB_SERVER", raising=False)
    monkeypatch.delenv("BENCHHUB_TOKEN", raising=False)
    old = os.umask(0)
    try:
        path = config_write(server="http://a", token="bhp_x")
    finally:
        os.umask(old)
    assert path == tmp_path / "benchhub" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert settings_resolve().token == "bhp_x"
    monkeypatch.setenv("BENCHHUB_TOKEN", "bhp_y")
    monkeypatch.setenv("BENCHHUB_SERVER", "http://b/")
    assert (settings_resolve().server, settings_resolve().token) == ("http://b", "bhp_y")


def test_no_server_anywhere_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("BENCHHUB_SERVER", raising=False)
    with pytest.raises(CliError, match="benchhub login --server"):
        settings_resolve()


def test_a_trial_is_named_after_its_patch_files():
    assert trial_label([Path("slow-commit.patch")]) == "slow-commit"
    assert trial_label([Path("0001-a b.diff"), Path("x/0002_c.patch")]) == "0001-a-b-0002_c"
    assert trial_label([Path("+++.patch")]) == "patch"


def test_a_trial_repeats_each_level_as_a_job_does_unless_told():
    trial = ["try", "x.patch", "--against", "master", "--host", "bench-01"]
    assert parser().parse_args(trial).repeats == plan_default("repeats") == 1
    assert parser().parse_args([*trial, "--repeats", "3"]).repeats == 3


def test_without_a_verdict_stdout_says_why_in_markdown_and_json_only():
    message = "job 7 failed at stage build:\n  Hunk #1 FAILED\n  ``` a fence"
    comment = render_error(message, fmt="markdown", status=4)
    assert comment.splitlines()[:3] == [
        "### BenchHub: no verdict",
        "",
        "job 7 failed at stage build:",
    ]
    assert comment.endswith("```\n  Hunk #1 FAILED\n  ` `` a fence\n```\n")
    assert json.loads(render_error(message, fmt="json", status=4)) == {
        "exit_status": 4,
        "error": message,
    }
    assert render_error(message, fmt="text", status=4) == ""


@pytest.mark.parametrize(
    ("ref", "name"),
    [
        ("master", "master"),
        ("HEAD", "master"),
        ("1a2b3c4d5e6f7a8b9c0d", "master@1a2b3c4d5e6f"),
        ("REL_15_18", "15.18"),
        ("REL9_6_24", "9.6.24"),
        ("REL_16_BETA1", "16beta1"),
        ("REL9_6_RC1", "9.6rc1"),
        ("REL_15_STABLE", "15-snapshot-2026-11-27"),
        ("REL9_6_STABLE", "9.6-snapshot-2026-11-27"),
    ],
)
def test_a_git_ref_gets_the_version_name_postgresql_gives_it(ref, name):
    assert ref_name(ref, today=dt.date(2026, 11, 27)) == name
    version_parse(name)  # the server takes it as a recipe's name


def test_a_ref_without_a_version_name_is_a_usage_error_naming_it():
    with pytest.raises(CliError, match="no recipe named my-branch, and as a git ref it has no"):
        ref_name("my-branch")


def _git(name: str, url: str, ref: str = "master", **settings) -> dict:
    source = {"kind": "git", "url": url, "ref": ref}
    return {"name": name, "url": f"/api/v1/recipes/{name}/", "source": source, "patches": [],
            **settings}  # fmt: skip


PG = "https://git.postgresql.org/git/postgresql.git"
MINE = "/srv/git/postgresql.git"


def test_a_bare_ref_is_built_from_the_one_repository_as_its_recipes_build_it():
    recipes = [_git("master", PG, contrib=["pg_stat_statements"]),
               {"name": "15.4", "source": {"kind": "release", "version": "15.4"}}]  # fmt: skip
    base = ref_base(recipes, ref="REL_15_18", repo=None)
    assert base == {
        "name": "15.18", "source": {"kind": "git", "url": PG, "ref": "REL_15_18"},
        "configure_flags": [], "cflags": "", "contrib": ["pg_stat_statements"],
    }  # fmt: skip
    # A recipe of that repository with that very ref is the base, whatever its name.
    assert ref_base(recipes, ref="master", repo=None) is recipes[0]


def test_a_ref_of_two_repositories_or_two_builds_is_ambiguous_and_names_the_choices():
    recipes = [_git("master", PG), _git("15devel", PG, "REL_15_STABLE"), _git("mine", MINE)]
    with pytest.raises(CliError) as refused:
        ref_base(recipes, ref="REL_15_18", repo=None)
    assert str(refused.value) == (
        "--against: no recipe named REL_15_18, and as a git ref it is ambiguous: "
        f"{PG} as master, 15devel build it; {MINE} as mine build it; choose with --repo URL"
    )
    assert ref_base(recipes, ref="REL_15_18", repo=MINE)["source"]["url"] == MINE
    cassert = [_git("master", PG), _git("master-cassert", PG, configure_flags=["--enable-cassert"])]
    with pytest.raises(CliError, match=r"master-cassert build it \(--enable-cassert\); choose wi"):
        ref_base(cassert, ref="REL_15_18", repo=PG)


def test_a_ref_of_a_repository_the_server_does_not_know_takes_repo():
    with pytest.raises(CliError, match="the server has no git recipe; pass --repo URL"):
        ref_base([], ref="master", repo=None)
    base = ref_base([], ref="master", repo=MINE)
    assert base["source"] == {"kind": "git", "url": MINE, "ref": "master"}
    assert (base["configure_flags"], base["contrib"]) == ([], [])


def test_the_progress_line_says_the_build_and_the_level_and_repeat_being_measured():
    job = {"id": 7, "state": "running", "claimed_host": "bench-01", "repeats": 3}
    # What the agent's heartbeat carries while it builds, then while it measures.
    build = {"stage": "build", "version": "master+p", "build_stage": "compile", "compiled": 812}
    assert progress_text({**job, "progress": build}) == (
        "job 7 running, on bench-01, build, build master+p compile (812 files compiled)"
    )
    step = Step(version="master+p", clients=8, repeat=2)
    measuring = {"stage": step.stage, "version": "master+p", "clients": 8, "repeat": 2,
                 "step": 5, "steps": 12}  # fmt: skip
    line = progress_text({**job, "progress": measuring})
    assert line.startswith("job 7 running, on bench-01, level c=8 repeat=2 version=master+p")
    assert line.endswith("step 5/12")
    assert progress_text({"id": 7, "state": "queued"}) == "job 7 queued"


def _schedule(name: str, file_set: str, crontab: str = "0 2 * * *", **extra) -> dict:
    return {"id": len(name), "name": name, "crontab": crontab, "template": {"versions": ["13"]},
            "enabled": True, "file_set": file_set, **extra}  # fmt: skip


def test_apply_prunes_only_its_own_sets_schedules_without_a_file(tmp_path):
    path = tmp_path / "kept.json"
    path.write_text(json.dumps({"name": "kept", "crontab": "0 3 * * *", "template": {}}))
    server = [
        _schedule("kept", "nightly", enabled=False),
        _schedule("gone", "nightly"),
        _schedule("by-hand", ""),
        _schedule("other-set", "weekly"),
    ]
    plan = apply_plan(files=[jobfile_read(path)], schedules=server, file_set="nightly", prune=True)
    assert [step.line() for step in plan.steps] == [
        f"change kept: crontab, template.versions ({path})",
        "delete gone",
    ]
    assert plan.steps[0].body["enabled"] is False  # the file leaves the pause alone
    unpruned = apply_plan(
        files=[jobfile_read(path)], schedules=server, file_set="nightly", prune=False
    )
    assert [s.action for s in unpruned.steps] == ["change"] and unpruned.unpruned == ["gone"]
