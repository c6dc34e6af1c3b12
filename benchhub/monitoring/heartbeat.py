"""Celery workers say they are alive, for each queue they consume, so /metrics can tell a queue
that no worker serves (docs/deployment.md, Alerts).

Celery's own worker heartbeats are events that nothing here listens to, and a worker started
with --without-heartbeat sends none; this step writes a time into Redis instead, from the
consumer's timer: it stops when the worker stops, and while the worker's event loop is stuck.
"""

import time
from typing import Any

import redis
from celery import bootsteps
from django.conf import settings

SEEN_KEY = "benchhub:celery-worker-seen:{queue}"
SEEN_INTERVAL_S = 15.0
# A queue no worker has served for a week reads as never served (0), which alerts the same.
SEEN_TTL_S = 7 * 24 * 3600


def worker_seen_record(*, queues: list[str], at: float | None = None) -> None:
    """Record that a worker consuming `queues` is alive now (Unix time `at`). A Redis that does
    not answer within 2 s is skipped: the worker cannot take tasks from it either, and /metrics
    says so (benchhub_redis_up)."""
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    now = time.time() if at is None else at
    try:
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.set(SEEN_KEY.format(queue=queue), repr(now), ex=SEEN_TTL_S)
            pipe.execute()
    except redis.RedisError:
        pass
    finally:
        client.close()


def worker_seen_times(*, client: redis.Redis, queues: list[str]) -> dict[str, float]:
    """The Unix time a worker of each of `queues` last said it was alive (0 when none did in a
    week). Raises redis.RedisError when Redis does not answer."""
    values = client.mget([SEEN_KEY.format(queue=queue) for queue in queues])
    return {
        queue: float(value) if value else 0.0 for queue, value in zip(queues, values, strict=True)
    }


class WorkerSeen(bootsteps.StartStopStep):
    """A consumer step: records the worker's queues at start and every SEEN_INTERVAL_S."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None

    def start(self, parent: Any) -> None:
        queues = sorted(parent.app.amqp.queues.consume_from)
        worker_seen_record(queues=queues)
        self.tref = parent.timer.call_repeatedly(
            SEEN_INTERVAL_S, worker_seen_record, kwargs={"queues": queues}
        )

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    shutdown = stop
