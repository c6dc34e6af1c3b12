"""The job-code checker: what a job may bring to a host (benchhub_runner.jobcode.checker)."""

from __future__ import annotations

import pytest

from benchhub_runner.jobcode.checker import job_code_check
from benchhub_runner.jobcode.options import check_options
from benchhub_runner.jobcode.settings import check_settings, setting_reason
from benchhub_runner.jobcode.sql import check_script, check_sql

REFUSED_SQL = [
    # psql meta-commands, anywhere outside quotes and comments
    (r"\! id > /tmp/owned", 1, r"\!"),
    ("SELECT 1;\n\\! id", 2, r"\!"),
    ("SELECT 1 \\gexec", 1, r"\gexec"),
    (r"\o /tmp/out", 1, r"\o"),
    (r"\copy t to '/tmp/x'", 1, r"\copy"),
    (r"\i /etc/passwd", 1, r"\i"),
    (r"\setenv PATH /tmp", 1, r"\setenv"),
    ("  \\! id", 1, r"\!"),
    ("SELECT 'a'\n/* note */ \\! id", 2, r"\!"),
    ("SELECT $x$ body $x$; \\! id", 1, r"\!"),
    # a string under standard_conforming_strings=off ends elsewhere: refused on either reading
    ("SELECT 'a\\' \\! id '", 1, r"\!"),
    # identifiers may hold $: foo$bar$ is not a dollar quote, so the \! is outside any quote
    ("SELECT foo$bar$ \\! $bar$", 1, r"\!"),
    # COPY ... PROGRAM, whatever the case, spacing, comments and nesting
    ("COPY t TO PROGRAM 'id > /tmp/x'", 1, "PROGRAM"),
    ("copy t from program 'id'", 1, "PROGRAM"),
    ("CoPy t\n  FROM /* why not */ PrOgRaM\n'id'", 1, "PROGRAM"),
    ("COPY (SELECT 1) TO -- comment\nPROGRAM 'id'", 1, "PROGRAM"),
    ("SELECT 1;\n\nCOPY t TO PROGRAM 'id'", 3, "PROGRAM"),
    ("DO $$ BEGIN EXECUTE 'COPY t TO PROGRAM ''id'''; END $$", 1, "PROGRAM"),
    ("DO $body$\nBEGIN\n  COPY t TO PROGRAM 'id';\nEND $body$", 3, "PROGRAM"),
    ("CREATE FUNCTION f() RETURNS void AS 'COPY t TO PROGRAM ''id'''", 1, "PROGRAM"),
    ("SELECT E'COPY t TO PROGRAM \\'id\\''", 1, "PROGRAM"),
    # server files, configuration, code
    ("COPY t FROM '/etc/passwd'", 1, "server file"),
    ("COPY t TO '/var/lib/x'", 1, "server file"),
    ("ALTER SYSTEM SET archive_command = 'id'", 1, "ALTER SYSTEM"),
    ("alter   system reset all", 1, "ALTER SYSTEM"),
    ("LOAD 'auto_explain'", 1, "LOAD"),
    ("SET session_preload_libraries = 'x'", 1, "session_preload_libraries"),
    ("SET LOCAL dynamic_library_path = '/tmp'", 1, "dynamic_library_path"),
    ("ALTER DATABASE postgres SET local_preload_libraries = 'x'", 1, "local_preload_libraries"),
    ("SELECT set_config('archive_command', 'id', false)", 1, "archive_command"),
]

ALLOWED_SQL = [
    "CREATE TABLE t (id int PRIMARY KEY, body text)",
    "SELECT '\\! not a command'",
    "SELECT E'\\\\! still a string'",
    "SELECT $$ \\! in a dollar quote $$",
    "SELECT $tag$ it's \\! fine $tag$",
    "-- \\! in a comment\nSELECT 1",
    "/* outer /* \\! nested */ still comment */ SELECT 1",
    'SELECT 1 AS "\\! quoted identifier"',
    "COPY t FROM STDIN",
    "COPY (SELECT 1) TO STDOUT WITH (FORMAT csv)",
    "CREATE TABLE t_copy (program int); INSERT INTO t_copy VALUES (1)",
    "UPDATE settings_table SET archive_command = 'x'",
    "SET work_mem = '64MB'",
    "TRUNCATE t_insert",
    "INSERT INTO t SELECT g FROM generate_series(1, {max_clients}) g",
    "DO $$\nBEGIN\n  EXECUTE 'CREATE FUNCTION bh() RETURNS int AS ''SELECT 1''';\nEND\n$$",
]


@pytest.mark.parametrize(("sql", "line", "words"), REFUSED_SQL)
def test_it_refuses_dangerous_sql_naming_the_line(sql, line, words):
    refused = check_sql(sql, field="workload.setup[0]")
    assert refused, sql
    assert refused[0].field == "workload.setup[0]"
    assert refused[0].line == line, refused
    assert words in refused[0].reason, refused


@pytest.mark.parametrize("sql", ALLOWED_SQL)
def test_it_allows_plain_sql(sql):
    assert check_sql(sql, field="workload.setup[0]") == []


@pytest.mark.parametrize(
    ("script", "line", "words"),
    [
        ("\\set aid random(1, 100)\n\\shell id > /tmp/x\nSELECT 1;", 2, "\\shell"),
        ("\\setshell out echo 1\nSELECT :out;", 1, "\\setshell"),
        ("  \\SHELL id", 1, "\\SHELL"),
        ("SELECT 1 \\gset\n\\unknown x", 2, "\\unknown"),
        ("\\set x 1\nCOPY t TO PROGRAM 'id';", 2, "PROGRAM"),
        ("BEGIN;\nSELECT 1;\nLOAD 'x';\nEND;", 3, "LOAD"),
    ],
)
def test_it_refuses_pgbench_shell_and_unknown_meta_commands(script, line, words):
    refused = check_script(script, field="workload.scripts[0].body")
    assert refused and refused[0].line == line and words in refused[0].reason, refused


def test_it_allows_the_harmless_pgbench_meta_commands():
    script = (
        "\\set aid random(1, 100000 * :scale)\n\\sleep 10 ms\n\\if :aid > 5\n"
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid \\gset\n\\else\n"
        "\\startpipeline\nSELECT 1;\n\\endpipeline\n\\endif\n\\setrandom x 1 10\n"
        "SELECT '\\shell in a string';"
    )
    assert check_script(script, field="s") == []


@pytest.mark.parametrize(
    ("options", "index", "words"),
    [
        (["-f", "/etc/passwd"], 0, "reads a script file"),
        (["--file=/etc/passwd"], 0, "reads a script file"),
        (["-n", "-l"], 1, "log file"),
        (["--log"], 0, "log file"),
        (["--log-prefix", "/srv/owned"], 0, "log files"),
        (["-h", "/var/run/postgresql"], 0, "another server"),
        (["--port=5432"], 0, "another server"),
        (["-U", "postgres"], 0, "another user"),
        (["-i"], 0, "initialises"),
        (["otherdb"], 0, "not an option"),
        (["--unheard-of"], 0, "not one the agent allows"),
        (["-Cn"], 0, "not one the agent allows"),
    ],
)
def test_it_refuses_pgbench_options_that_touch_files_or_connect_elsewhere(options, index, words):
    refused = check_options(options, field="workload.options")
    assert refused[0].field == f"workload.options[{index}]" and words in refused[0].reason


def test_it_allows_the_harmless_pgbench_options():
    options = ["-n", "-R", "100", "--rate=50", "-P5", "-M", "prepared", "-D", "x=1", "-C"]
    options += ["--max-tries=3", "--random-seed", "7", "-L", "50", "--report-per-command"]
    assert check_options(options, field="o") == []


@pytest.mark.parametrize(
    "name",
    [
        "archive_command",
        "restore_command",
        "ssl_passphrase_command",
        "Archive_Command",
        "archive_library",
        "shared_preload_libraries",
        "session_preload_libraries",
        "local_preload_libraries",
        "dynamic_library_path",
        "jit_provider",
        "include",
        "include_dir",
        "include_if_exists",
        "ssl_cert_file",
        "log_directory",
        "log_filename",
        "data_directory",
        "hba_file",
        "primary_conninfo",
        "unix_socket_permissions",
        "listen_addresses",
    ],
)
def test_it_refuses_settings_that_run_commands_load_code_or_name_files(name):
    assert setting_reason(name)
    refused = check_settings({name: "x"}, field="config_overrides")
    assert refused[0].field == f"config_overrides.{name}"


@pytest.mark.parametrize(
    "name", ["shared_buffers", "work_mem", "search_path", "max_wal_size", "jit", "archive_mode"]
)
def test_it_allows_ordinary_settings(name):
    assert setting_reason(name) is None


def test_it_names_every_field_of_a_whole_job():
    workload = {
        "setup": ["SELECT 1", "CREATE TABLE t();\n\\! id"],
        "level_setup": ["COPY t TO PROGRAM 'id'"],
        "scripts": [{"name": "a", "body": "\\shell id"}],
        "streams": [{"name": "s", "scripts": [{"body": "SELECT 1;\n\\setshell x id"}]}],
        "options": ["-n", "--log"],
    }
    refused = job_code_check(workload=workload, config_overrides={"archive_command": "id"})
    assert [(r.field, r.line) for r in refused] == [
        ("workload.setup[1]", 2),
        ("workload.level_setup[0]", 1),
        ("workload.scripts[0].body", 1),
        ("workload.streams[0].scripts[0].body", 2),
        ("workload.options[1]", 0),
        ("config_overrides.archive_command", 0),
    ]
    assert str(refused[0]).startswith("workload.setup[1]: line 2: psql meta-command \\!")


def test_it_passes_a_plain_job():
    workload = {"builtin": "select-only", "setup": ["CREATE TABLE x (a int)"], "options": ["-n"]}
    assert job_code_check(workload=workload, config_overrides={"shared_buffers": "1GB"}) == []


@pytest.mark.parametrize(
    "name",
    [
        "shared_buffers",
        "Work_Mem",
        "max_wal_size",
        "checkpoint_segments",
        "enable_seqscan",
        "autovacuum_naptime",
        "max_parallel_workers_per_gather",
        "log_min_duration_statement",
        "pg_stat_statements.track",
    ],
)
def test_it_lets_a_job_override_the_settings_a_benchmark_varies(name):
    assert check_settings({name: "1"}, field="config_overrides") == []


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("plperl.on_init", "runs code when the server starts an interpreter"),
        ("plperl.on_plperlu_init", "runs code when the server starts an interpreter"),
        ("plpython3u.anything", "is not one a job may override"),
        ("session_preload_libraries", "loads a shared library"),
        ("restore_command", "runs a shell command"),
        ("cluster_name", "is not one a job may override"),
        ("search_path", "is not one a job may override"),
        ("logging_collector", "is not one a job may override"),
    ],
)
def test_it_refuses_any_other_setting_override_naming_it(name, words):
    (refused,) = check_settings({"shared_buffers": "1GB", name: "x"}, field="config_overrides")
    assert refused.field == f"config_overrides.{name}"
    assert words in refused.reason


def test_it_refuses_setting_an_interpreters_start_code_in_sql():
    (refused,) = check_sql("SET plperl.on_init = 'system(1)'", field="workload.setup[0]")
    assert "plperl.on_init: runs code" in refused.reason
