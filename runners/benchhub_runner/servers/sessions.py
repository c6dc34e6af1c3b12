"""A cluster's SQL sessions through psql: the agent's own (pinned to the system catalog, so
nothing a job creates stands in for what they read) and the job's (with the session defaults
the job may have changed); the job's database role; the server's settings as it reports them."""

from __future__ import annotations

import csv
import io
import subprocess

from ..sandbox.processes import job_env
from .conf import ClusterError
from .programs import ClusterPrograms

SUPERUSER = "postgres"
# The role a job's setup and pgbench connect as on a host that does not trust job code.
JOB_ROLE = "benchhub_job"
# The agent's own sessions resolve names in the system catalog only (pg_temp last: a session's
# temporary schema otherwise comes first for relations). Startup options are the client's
# source, which outranks per-database and per-role defaults, so no stored SET reaches them.
AGENT_OPTIONS = "-c search_path=pg_catalog,pg_temp"
# The schema that holds the agent's extensions (pg_stat_statements): owned by the superuser,
# so that a job owning `public` cannot swap what the agent reads for its own views.
AGENT_SCHEMA = "benchhub_agent"


class ClusterSessions(ClusterPrograms):
    """The psql side of a cluster; Cluster (cluster.py) adds its lifecycle."""

    def job_role_create(self, role: str = JOB_ROLE) -> str:
        """Create `role` (login, not a superuser), let it create objects and schemas in the
        database the job uses and make it the owner of that database's `public` schema;
        returns it.

        The role does not own the database: a database's owner may `ALTER DATABASE ... SET`
        defaults (search_path) that every later session there, the agent's too, starts with."""
        quoted = '"' + role.replace('"', '""') + '"'
        self.sql(
            f"CREATE ROLE {quoted} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION; "
            f"GRANT CREATE, TEMPORARY ON DATABASE postgres TO {quoted}; "
            f"ALTER SCHEMA public OWNER TO {quoted}"
        )
        return role

    def sql(
        self, query: str, *, timeout: float = 600, user: str = SUPERUSER, job: bool = False
    ) -> str:
        """Run SQL through psql as database `user` and return its unaligned, tuples-only output
        (no final newline). psql runs as the cluster's OS account, with a clean environment.

        `job`: the SQL is job code and runs with the session defaults as they are; otherwise
        it is the agent's own and its session is pinned (AGENT_OPTIONS)."""
        psql = self.client_bindir / "psql"
        argv = [str(psql), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        argv += ["-h", str(self.socket_dir), "-p", str(self.port), "-U", user]
        argv += ["-d", "postgres", "-c", query]
        argv, as_account = self._as_account(argv)
        extra = {} if job else {"PGOPTIONS": AGENT_OPTIONS}
        try:
            done: subprocess.CompletedProcess[bytes] = subprocess.run(
                argv,
                capture_output=True,
                timeout=timeout,
                env=job_env(home=self.workdir, extra=extra),
                cwd=self.workdir,
                check=False,
                **as_account,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClusterError(f"psql failed for {query!r}: {exc}") from exc
        out = done.stdout.decode("utf-8", errors="replace")
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", errors="replace").strip()
            raise ClusterError(f"psql exit {done.returncode} for {query!r}: {err}")
        return out.removesuffix("\n")

    def psql_session(self, *, user: str = SUPERUSER) -> subprocess.Popen[str]:
        """A psql reading SQL from its stdin and answering on its stdout (unaligned, tuples
        only), for a caller that keeps one connection open (the wait-event sampler); an agent
        session, pinned as `sql` pins it."""
        argv = [str(self.client_bindir / "psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
        argv += ["-h", str(self.socket_dir), "-p", str(self.port), "-U", user, "-d", "postgres"]
        argv, as_account = self._as_account(argv)
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                bufsize=1,
                env=job_env(home=self.workdir, extra={"PGOPTIONS": AGENT_OPTIONS}),
                cwd=self.workdir,
                **as_account,
            )
        except OSError as exc:
            raise ClusterError(f"cannot start psql: {exc}") from exc

    def settings(self) -> tuple[dict[str, str], dict[str, str]]:
        """({name: value as SHOW prints it}, {name: source}) for every server setting."""
        # CSV through COPY, so no value (paths, lists, odd strings) can break the parsing.
        out = self.sql(
            "COPY (SELECT name, current_setting(name), source FROM pg_catalog.pg_settings "
            "ORDER BY name) TO STDOUT WITH (FORMAT csv)"
        )
        values: dict[str, str] = {}
        sources: dict[str, str] = {}
        for name, value, source in csv.reader(io.StringIO(out)):
            values[name] = value
            sources[name] = source
        return values, sources

    def server_version(self) -> str:
        return self.sql("SHOW server_version")

    def checkpoint(self) -> None:
        self.sql("CHECKPOINT")
