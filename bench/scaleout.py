"""The load test's site scaled out as docker-compose.yml scales it, every part a real process here.

    python -m bench.load --scale-out [--quick] ...    (make load LOAD_ARGS="--scale-out")

- a private primary (benchhub.testing.private), the bench database migrated on it;
- a streaming replica of it by pg_basebackup -R, which the web processes read through
  DATABASE_REPLICA_URL (benchhub/replica.py: anonymous page reads go there);
- Debian's pgbouncer in transaction mode in front of the primary (benchhub.testing.pooler,
  DATABASE_POOLER=transaction), with fewer server connections than it has clients;
- two gunicorn processes behind Debian's haproxy, run with deploy/haproxy/haproxy.cfg whose
  ports alone are templated (benchhub.testing.balancer); together they have the workers the
  single process has, so the two shapes get the same CPUs;
- a Celery worker per queue the load feeds, ingest and analysis, as the compose file splits
  them (nothing in the load queues a bisection: its queue is named and left unconsumed).

The bench process itself talks to the primary directly: it seeds, feeds jobs and counts what
was stored. After the load, `settle` waits for the workers to have done their part.
"""

from __future__ import annotations

import os
import time
import uuid
from contextlib import suppress

import psycopg

from bench import env
from bench.figures import Figure

QUEUES = ("BENCHHUB_INGEST_QUEUE", "BENCHHUB_ANALYSIS_QUEUE", "BENCHHUB_BISECTION_QUEUE")
SETTLE_S = 180.0  # how long the workers may take to catch up after the load


class ScaleOut:
    """The scaled-out site on the bench database `database`; `url` is the load balancer's."""

    def __init__(self, *, database: str, web_workers: int, pool_size: int = 4) -> None:
        self.database = database
        self.web_workers = web_workers
        self.pool_size = pool_size
        suffix = uuid.uuid4().hex[:6]
        self.queues = {name: f"load-{name.split('_')[1].lower()}-{suffix}" for name in QUEUES}
        self.url = ""
        self._stops: list = []  # what was started, stopped in reverse order
        self._replica_xacts = 0
        self.startup_s = 0.0  # initdb, migrate, pg_basebackup and every process answering

    def __enter__(self) -> ScaleOut:
        began = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.startup_s = time.monotonic() - began
        return self

    def _start(self) -> None:
        from benchhub.testing.balancer import HAProxy
        from benchhub.testing.pooler import PgBouncer
        from benchhub.testing.private import PrivatePostgres, PrivateReplica
        from benchhub.testing.processes import Gunicorn, celery_worker

        # This process's own tasks (the seeded runs' aggregation) go to the workers' queues.
        os.environ.update(self.queues)
        self.primary = self._started(PrivatePostgres())
        env.bench_prepare(self.primary.url(), self.database)  # Django in this process: primary
        self.replica = self._started(PrivateReplica(self.primary))
        self.pooler = self._started(PgBouncer(pool_size=self.pool_size))
        site = {
            "DATABASE_URL": self.pooler.url,
            "DATABASE_POOLER": "transaction",
            "DATABASE_REPLICA_URL": self.replica.url(self.database),
            "BENCHHUB_PROXY_HOPS": "1",  # haproxy, as in the compose file
            **self.queues,
        }
        ingest, analysis = self.queues[QUEUES[0]], self.queues[QUEUES[1]]
        self.workers = [self._started(celery_worker(q, env=site)) for q in (ingest, analysis)]
        self.webs = [
            self._started(Gunicorn(queue=ingest, env=site, workers=self.web_workers))
            for _ in range(2)
        ]
        self.balancer = self._started(HAProxy(backends=[web.port for web in self.webs]))
        self.url = self.balancer.url
        self._replica_xacts = self.replica_transactions()

    def _started(self, part):
        started = part.start()
        self._stops.append(part.stop)
        return started

    def __exit__(self, *exc: object) -> None:
        while self._stops:
            stop = self._stops.pop()
            with suppress(Exception):
                stop()

    def replica_transactions(self) -> int:
        """Transactions the replica has served on the bench database since it started."""
        with psycopg.connect(self.replica.url(self.database), autocommit=True) as conn:
            row = conn.execute(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                [self.database],
            ).fetchone()
        return int(row[0]) if row else 0

    def queue_lengths(self) -> dict[str, int]:
        import redis

        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        names = [self.queues[QUEUES[0]], self.queues[QUEUES[1]]]
        return {name: int(client.llen(name)) for name in names}

    def settle(self, *, tag: str, timeout_s: float = SETTLE_S) -> float:
        """Wait until the workers have aggregated every run of the load and emptied their
        queues; the seconds it took after the load ended."""
        from benchhub.results.models import Run

        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            pending = Run.objects.filter(job__host_tags=[tag], aggregated_at__isnull=True)
            if not pending.exists() and not any(self.queue_lengths().values()):
                break
            time.sleep(1.0)
        return time.monotonic() - started

    def figures(self, *, tag: str) -> tuple[list[Figure], dict]:
        """What shows every part of the chain did its share (after `settle`)."""
        from benchhub.results.models import Run

        settled_s = self.settle(tag=tag)
        unaggregated = Run.objects.filter(job__host_tags=[tag], aggregated_at__isnull=True)
        served = self.balancer.served()
        replica = self.replica_transactions() - self._replica_xacts
        pooled = self.pooler.stats()["total_xact_count"]
        queued = self.queue_lengths()
        figures = [
            Figure("scale-out", "runs the workers left unaggregated", unaggregated.count(),
                   "runs", op="<=", target=0, note=f"settled {settled_s:.0f} s after the load"),
            Figure("scale-out", "tasks left in the workers' queues", sum(queued.values()),
                   "tasks", op="<=", target=0),
            Figure("scale-out", "web processes that served requests", len(served), "processes",
                   op=">=", target=len(self.webs), note=", ".join(f"{k} {v}" for k, v in
                                                              sorted(served.items()))),
            Figure("scale-out", "replica transactions", replica, "transactions", op=">=",
                   target=1),
            Figure("scale-out", "pgbouncer transactions", pooled, "transactions", op=">=",
                   target=1, note=f"{self.pool_size} server connections"),
        ]  # fmt: skip
        details = {
            "served_by": dict(served),
            "replica_transactions": replica,
            "pgbouncer": self.pooler.stats(),
            "queues_left": queued,
            "startup_s": self.startup_s,
            "settled_s": settled_s,
            "gunicorn_processes": len(self.webs),
            "gunicorn_workers_each": self.web_workers,
            "pgbouncer_pool_size": self.pool_size,
        }
        return figures, details
