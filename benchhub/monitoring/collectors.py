"""What /metrics reports about the state of the site, read from the database and Redis at scrape
time: every web process answers the same, and nothing is kept between scrapes."""

from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import redis
from django.conf import settings
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from benchhub.hosts.selectors import host_presence_list, host_set_aside_list
from benchhub.jobs.selectors import job_claim_waits, job_oldest_queued_at, job_state_counts
from benchhub.monitoring.heartbeat import worker_seen_times

CLAIM_WINDOW = timedelta(hours=1)
CLAIM_QUANTILES = (0.5, 0.95)
# kombu keeps a queue's messages of priority 0 under its name, others under the name, this
# separator and the priority step.
PRIORITY_KEYS = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def celery_queue_lengths(*, client: redis.Redis) -> dict[str, int]:
    """Messages waiting in each Celery queue of the settings, by queue name. Raises
    redis.RedisError when Redis does not answer."""
    queues = list(settings.BENCHHUB_QUEUES.values())
    with client.pipeline(transaction=False) as pipe:
        for queue in queues:
            for suffix in PRIORITY_KEYS:
                pipe.llen(queue + suffix)
        lengths = pipe.execute()
    step = len(PRIORITY_KEYS)
    return {queue: sum(lengths[i * step : (i + 1) * step]) for i, queue in enumerate(queues)}


class StateCollector(Collector):
    """Jobs by state, the wait before a claim, agents' silence and the runs they set aside,
    Celery queue lengths and when a worker of each queue was last alive."""

    def collect(self) -> Iterator[Metric]:
        yield from self._jobs()
        yield from self._agents()
        yield from self._queues()

    def _jobs(self) -> Iterator[Metric]:
        now = timezone.now()
        jobs = GaugeMetricFamily("benchhub_jobs", "Jobs in each state.", labels=["state"])
        for state, count in job_state_counts().items():
            jobs.add_metric([state], count)
        yield jobs
        oldest = job_oldest_queued_at()
        yield GaugeMetricFamily(
            "benchhub_job_oldest_queued_age_seconds",
            "How long the oldest queued job has waited for an agent (0 when none waits).",
            value=(now - oldest).total_seconds() if oldest else 0.0,
        )
        waits = job_claim_waits(since=now - CLAIM_WINDOW)
        claim = GaugeMetricFamily(
            "benchhub_job_claim_wait_seconds",
            "Seconds from a job's creation to its claim, quantiles over the jobs claimed in the "
            "last hour (absent when none was).",
            labels=["quantile"],
        )
        if waits:
            for q, value in zip(CLAIM_QUANTILES, np.quantile(waits, CLAIM_QUANTILES), strict=True):
                claim.add_metric([str(q)], float(value))
        yield claim
        yield GaugeMetricFamily(
            "benchhub_job_claims_last_hour", "Jobs claimed in the last hour.", value=len(waits)
        )

    def _agents(self) -> Iterator[Metric]:
        ages = GaugeMetricFamily(
            "benchhub_agent_last_seen_age_seconds",
            "Seconds since each host's agent last called in (hosts never heard from: absent).",
            labels=["host"],
        )
        online = 0
        for host in host_presence_list():
            online += host.online
            if host.seen_s_ago is not None:
                ages.add_metric([host.name], host.seen_s_ago)
        yield ages
        yield GaugeMetricFamily(
            "benchhub_agents_online",
            "Hosts whose agent called in within BENCHHUB_AGENT_ONLINE_S.",
            value=online,
        )
        set_aside = GaugeMetricFamily(
            "benchhub_agent_runs_set_aside",
            "Runs each host's agent set aside because this server refused their upload or kept "
            "failing on it, as it last reported them (hosts with none: absent).",
            labels=["host"],
        )
        for reported in host_set_aside_list():
            set_aside.add_metric([reported.name], len(reported.runs))
        yield set_aside

    def _queues(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("benchhub_redis_up", "1 when Redis answered this scrape.")
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
        )
        try:
            lengths = celery_queue_lengths(client=client)
            seen = worker_seen_times(client=client, queues=list(lengths))
        except redis.RedisError:
            up.add_metric([], 0)
            yield up
            return
        finally:
            client.close()
        up.add_metric([], 1)
        yield up
        queue = GaugeMetricFamily(
            "benchhub_celery_queue_length", "Tasks waiting in each Celery queue.", labels=["queue"]
        )
        for name, length in lengths.items():
            queue.add_metric([name], length)
        yield queue
        worker = GaugeMetricFamily(
            "benchhub_celery_worker_last_seen_timestamp_seconds",
            "Unix time a worker consuming each Celery queue last said it was alive (0: none in "
            "the last week).",
            labels=["queue"],
        )
        for name, at in seen.items():
            worker.add_metric([name], at)
        yield worker
