"""Why a result is what it is: evidence from inside the server for each measurement.

`ServerEvidence.probe` learns once per server what it can give (its major, its statistics views,
whether pg_stat_statements works). `LevelEvidence` is handed to a LevelRun: `begin()` runs just
before the measured streams start (after the warm-up), `end()` just after they finish, and
`payload()` gives the result's `evidence` (docs/runner-api.md, Evidence). Nothing here may fail
a measurement: a part that cannot be had is left out and `unavailable` says why.

Cost, kept off the measurement: the statistics snapshots run before and after it; during it
only the wait sampler's one connection runs a small query five times a second. The collectors
that sit in the server's hot path, pg_stat_statements and pgbench's per-transaction log, run
only in a separate, unmeasured evidence pass per level (`collectors=True`), whose top statements
and latency go with that level's first repeat (docs/agent.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..servers.cluster import Cluster, ClusterError
from . import latency, serverstats, statements
from .serverstats import Server
from .waits import WaitSampler

logger = logging.getLogger(__name__)

# Aim for about this many logged transactions per measurement: enough for a p99.9 with a
# hundred transactions above it, little for pgbench to write and the agent to read.
TARGET_LOG_LINES = 100_000
DEFAULT_SAMPLING_RATE = 0.1
MIN_SAMPLING_RATE = 0.0001


@dataclass(frozen=True)
class ServerEvidence:
    """What one running server can give; `statements` is why it has no statements, or None."""

    server: Server
    statements: str | None

    @classmethod
    def probe(cls, cluster: Cluster, *, preloaded: bool) -> ServerEvidence:
        """Learn what the server can give, and leave pg_stat_statements tracking nothing."""
        server = serverstats.probe(cluster)
        why = "pg_stat_statements not in this build"
        if preloaded:
            why = statements.enable(cluster) or ""
            if not why:
                statements.track(cluster, on=False, version_num=server.version_num)
        return cls(server=server, statements=why or None)

    def tracking(self, cluster: Cluster, *, on: bool) -> None:
        """Switch pg_stat_statements on for an evidence pass, or off after it."""
        if not self.statements:
            statements.track(cluster, on=on, version_num=self.server.version_num)


def sampling_rate(expected_transactions: float | None) -> float:
    """The log's sampling rate for a measurement expected to run that many transactions
    (None: not known yet)."""
    if not expected_transactions:
        return DEFAULT_SAMPLING_RATE
    rate = TARGET_LOG_LINES / expected_transactions
    return float(f"{min(1.0, max(MIN_SAMPLING_RATE, rate)):.2g}")


# What only the evidence pass gives.
PASS_PARTS = ("statements", "latency")


class LevelEvidence:
    """The evidence of one measurement (see the module's docstring). `collectors`: this is the
    evidence pass, which runs pg_stat_statements and the per-transaction log; a measured pass
    (False) has neither, and only its statistics and waits."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        server: ServerEvidence,
        log_dir: Path,
        sampling_rate: float,
        client_version: tuple[int, int],
        collectors: bool = True,
    ) -> None:
        self.cluster = cluster
        self.server = server
        self.log_dir = log_dir
        self.sampling_rate = sampling_rate
        self.collectors = collectors
        self.logging = collectors and client_version >= (10, 0)
        self.unavailable: dict[str, str] = {}
        self.parts: dict[str, Any] = {}
        self._before: dict[str, Any] | None = None
        self._sampler: WaitSampler | None = None
        # The agent's own queries are kept out of the top statements.
        self.untracked = "" if server.statements else statements.UNTRACKED
        if not collectors:
            return
        if server.statements:
            self.unavailable["statements"] = server.statements
        if not self.logging:
            self.unavailable["latency"] = "pgbench before 10 has no --log-prefix"
        else:
            shutil.rmtree(log_dir, ignore_errors=True)
            log_dir.mkdir(parents=True)
            account = cluster.account
            if account is not None:
                # pgbench runs as the cluster's account and writes its log here.
                os.chown(log_dir, account.uid, account.gid, follow_symlinks=False)

    def log_prefix(self, name: str) -> Path | None:
        return self.log_dir / name if self.logging else None

    def begin(self) -> None:
        version = self.server.server.version_num
        try:
            serverstats.settle(self.cluster, self.server.server, prefix=self.untracked)
            self._before = serverstats.snapshot(
                self.cluster, self.server.server, prefix=self.untracked
            )
        except (ClusterError, ValueError) as exc:
            self.unavailable["stats"] = f"statistics snapshot failed: {str(exc)[-300:]}"
        if self.collectors and not self.server.statements:
            try:
                statements.reset(self.cluster)
            except ClusterError as exc:
                self.unavailable["statements"] = f"reset failed: {str(exc)[-300:]}"
        self._sampler = WaitSampler(
            cluster=self.cluster, version_num=version, untracked=self.untracked
        )
        self._sampler.start()

    def end(self) -> None:
        if self._sampler is not None:
            waits = self._sampler.stop()
            if waits is not None:
                self.parts["waits"] = waits
            else:
                self.unavailable["waits"] = self._sampler.error or "no sampling round completed"
        if self._before is not None:
            try:
                serverstats.settle(self.cluster, self.server.server, prefix=self.untracked)
                after = serverstats.snapshot(
                    self.cluster, self.server.server, prefix=self.untracked
                )
                self.parts["stats"] = serverstats.deltas(self._before, after)
            except (ClusterError, ValueError, KeyError) as exc:
                self.unavailable["stats"] = f"statistics snapshot failed: {str(exc)[-300:]}"
        if self.collectors and "statements" not in self.unavailable:
            try:
                version = self.server.server.version_num
                self.parts["statements"] = statements.top(self.cluster, version_num=version)
            except (ClusterError, ValueError) as exc:
                self.unavailable["statements"] = f"read failed: {str(exc)[-300:]}"

    def payload(self) -> dict[str, Any]:
        """The result's `evidence`; reads and removes the pgbench log."""
        if self.logging:
            try:
                # The job's directory is two up (txlog/<level>): below it, the job's files.
                trusted = self.log_dir.parent.parent
                files = latency.log_files(self.log_dir, trusted=trusted)
                summary = latency.summary(
                    latency.read_latencies(files, trusted=trusted),
                    sampling_rate=self.sampling_rate,
                )
            except OSError as exc:
                summary = None
                self.unavailable["latency"] = f"pgbench log unreadable: {exc}"
            if summary is not None:
                self.parts["latency"] = summary
            else:
                self.unavailable.setdefault("latency", "pgbench logged no completed transaction")
            with contextlib.suppress(OSError):
                shutil.rmtree(self.log_dir)
        evidence = dict(self.parts)
        if self.unavailable:
            evidence["unavailable"] = dict(self.unavailable)
        return evidence
