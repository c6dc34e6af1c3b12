"""/metrics: off unless a token is configured, guarded by it, and what it reports read from the
real database and Redis (jobs by state, the wait before a claim, agents' silence, Celery queue
lengths) plus request latencies by URL pattern."""

import re
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
import redis
import yaml
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from benchhub.celery import app as celery_app
from benchhub.hosts.models import Host
from benchhub.jobs.models import Job
from benchhub.jobs.serializers import JobInSerializer
from benchhub.jobs.services import job_create
from benchhub.jobs.tests.test_queue import JOB
from benchhub.testing import processes

TOKEN = "m" * 40


@pytest.fixture
def metrics_on(settings):
    settings.BENCHHUB_METRICS_TOKEN = TOKEN


def scrape(client: Client) -> dict[str, dict[tuple, float]]:
    """{metric sample name: {sorted label items: value}}."""
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def queued_job(host: str) -> Job:
    data = JobInSerializer(data={**JOB, "host": host})
    data.is_valid(raise_exception=True)
    return job_create(**data.validated_data)


def test_it_answers_404_when_no_token_is_configured(client, db):
    assert django_settings.BENCHHUB_METRICS_TOKEN == ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Token {TOKEN}", f"Bearer {TOKEN}x"])
def test_it_refuses_a_scraper_without_the_token(client, db, metrics_on, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"benchhub_" not in response.content


def test_it_serves_a_private_instance_and_any_host_name(client, db, metrics_on, settings):
    # Prometheus reaches each replica by its address, which ALLOWED_HOSTS does not list.
    settings.PRIVATE = True
    settings.SECURE_SSL_REDIRECT = True
    response = client.get(
        "/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", HTTP_HOST="10.1.2.3:8000"
    )
    assert response.status_code == 200
    assert client.get("/", HTTP_HOST="10.1.2.3:8000").status_code == 400  # pages still check


def test_it_counts_jobs_by_state_and_the_oldest_wait(client, agent, metrics_on):
    first = queued_job("bench-01")
    queued_job("bench-01")
    Job.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    samples = scrape(client)
    jobs = {dict(labels)["state"]: value for labels, value in samples["benchhub_jobs"].items()}
    assert jobs == {state: 0.0 for state in Job.State.values} | {"queued": 2.0}
    assert 600 <= samples["benchhub_job_oldest_queued_age_seconds"][()] < 660
    assert samples["benchhub_job_claims_last_hour"][()] == 0
    assert "benchhub_job_claim_wait_seconds" not in samples


def test_it_reports_the_wait_before_claims_through_the_claim_api(client, agent, metrics_on):
    job = queued_job("bench-01")
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=90))
    assert agent.client.post("/api/v1/jobs/claim/", {}, format="json").status_code == 200
    samples = scrape(client)
    waits = {
        dict(labels)["quantile"]: v
        for labels, v in samples["benchhub_job_claim_wait_seconds"].items()
    }
    assert set(waits) == {"0.5", "0.95"}
    assert all(90 <= value < 120 for value in waits.values()), waits
    assert samples["benchhub_job_claims_last_hour"][()] == 1
    assert samples["benchhub_jobs"][(("state", "claimed"),)] == 1


def test_it_reports_how_long_each_agent_has_been_silent(client, agent, other_agent, metrics_on):
    Host.objects.filter(name="bench-01").update(last_seen_at=timezone.now() - timedelta(hours=2))
    Host.objects.filter(name="bench-02").update(last_seen_at=timezone.now())
    Host.objects.create(name="bench-03")  # never heard from
    samples = scrape(client)
    ages = {
        dict(labels)["host"]: v
        for labels, v in samples["benchhub_agent_last_seen_age_seconds"].items()
    }
    assert set(ages) == {"bench-01", "bench-02"}
    assert 7200 <= ages["bench-01"] < 7300
    assert ages["bench-02"] < 30
    assert samples["benchhub_agents_online"][()] == 1


def test_it_reports_each_celery_queues_length_from_redis(client, db, metrics_on, settings):
    names = {
        kind: f"test-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("ingest", "analysis", "bisection")
    }
    settings.BENCHHUB_QUEUES = names
    try:
        for _ in range(3):
            celery_app.send_task("jobs.expire_leases", queue=names["ingest"])
        celery_app.send_task("regressions.detect_run", args=(1,), queue=names["analysis"])
        samples = scrape(client)
    finally:
        redis.Redis.from_url(settings.REDIS_URL).delete(*names.values())
    lengths = {
        dict(labels)["queue"]: v for labels, v in samples["benchhub_celery_queue_length"].items()
    }
    assert lengths == {names["ingest"]: 3, names["analysis"]: 1, names["bisection"]: 0}
    assert samples["benchhub_redis_up"][()] == 1


def test_it_counts_the_runs_each_agent_set_aside_as_it_reported_them(client, agent, metrics_on):
    entry = {"run_uuid": str(uuid.uuid4()), "status": 400, "error": "invalid", "tries": 1}
    report = {"set_aside": [entry, {**entry, "run_uuid": str(uuid.uuid4())}]}
    assert agent.client.post("/api/v1/hosts/spool/", report, format="json").status_code == 204
    assert scrape(client)["benchhub_agent_runs_set_aside"] == {(("host", "bench-01"),): 2}
    # The agent's next report replaces the last: a spool emptied by hand clears the figure.
    assert agent.client.post("/api/v1/hosts/spool/", {"set_aside": []}, format="json").status_code
    assert "benchhub_agent_runs_set_aside" not in scrape(client)


def test_it_reports_when_a_real_worker_of_each_queue_was_last_alive(
    client, db, metrics_on, settings
):
    """A worker records its queue as it starts (and every 15 s after); a queue that no worker
    consumes reads 0."""
    served, unserved = processes.unique_queue(), processes.unique_queue()
    settings.BENCHHUB_QUEUES = {"ingest": served, "analysis": unserved, "bisection": unserved}
    started = time.time()
    worker = processes.celery_worker(served).start()
    try:
        deadline = time.monotonic() + 60
        seen: dict[str, float] = {}
        while time.monotonic() < deadline:
            samples = scrape(client)["benchhub_celery_worker_last_seen_timestamp_seconds"]
            seen = {dict(labels)["queue"]: value for labels, value in samples.items()}
            if seen.get(served):
                break
            time.sleep(0.5)
    finally:
        worker.stop()
    assert started <= seen[served] <= time.time(), worker.output()
    assert seen[unserved] == 0


def test_it_says_redis_is_down_and_still_reports_the_rest(client, db, metrics_on, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{processes.free_port()}/0"
    samples = scrape(client)
    assert samples["benchhub_redis_up"][()] == 0
    assert "benchhub_celery_queue_length" not in samples
    # Not 0 (which reads as "no worker"): Redis being down is its own alert.
    assert "benchhub_celery_worker_last_seen_timestamp_seconds" not in samples
    assert "benchhub_jobs" in samples


def test_it_times_requests_by_url_pattern(client, agent, metrics_on):
    def count(route: str, status: str) -> float:
        labels = (("method", "GET"), ("route", route), ("status", status))
        return scrape(client)["benchhub_http_request_duration_seconds_count"].get(labels, 0.0)

    run = "api/v1/runs/<uuid:run_uuid>/"
    before = count(run, "404"), count("healthz", "200")
    for _ in range(2):
        assert client.get(f"/api/v1/runs/{uuid.uuid4()}/").status_code == 404
    client.get("/healthz")
    assert (count(run, "404"), count("healthz", "200")) == (before[0] + 2, before[1] + 1)


def test_each_response_says_how_long_django_took_in_server_timing(client, db):
    """Every response, an API error's too, carries its time in Django: at most what the caller
    waited."""
    for path, status in (("/healthz", 200), (f"/api/v1/runs/{uuid.uuid4()}/", 404)):
        started = time.perf_counter()
        response = client.get(path)
        waited_ms = (time.perf_counter() - started) * 1000
        assert response.status_code == status
        name, duration = response["Server-Timing"].split(";")
        assert name == "app" and duration.startswith("dur=")
        assert 0 < float(duration.removeprefix("dur=")) <= waited_ms


def _writers(metrics_dir: Path) -> set[str]:
    """The processes that wrote into a multiprocess directory (files are <kind>_<pid>.db)."""
    return {path.stem.rsplit("_", 1)[-1] for path in metrics_dir.glob("*.db")}


def _get(url: str) -> None:
    urllib.request.urlopen(url, timeout=5).close()  # noqa: S310


def test_gunicorn_processes_share_their_request_latencies_in_a_directory(
    transactional_db, tmp_path
):
    """Two gunicorn workers: whichever answers the scrape reports the requests of both."""
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    metrics_dir.chmod(0o777)
    env = {"BENCHHUB_METRICS_TOKEN": TOKEN, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    server = processes.Gunicorn(queue=processes.unique_queue(), env=env).start()
    try:
        # The kernel may hand every sequential connection to the same worker: requests in
        # parallel until each worker has written its share (the probes of start() count too,
        # so the test reads the total, not a guess).
        deadline = time.monotonic() + 60
        with ThreadPoolExecutor(max_workers=4) as pool:
            while len(_writers(metrics_dir)) < 2 and time.monotonic() < deadline:
                list(pool.map(lambda _: _get(f"{server.url}/healthz"), range(20)))
        request = urllib.request.Request(  # noqa: S310
            f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        counts = []
        for _ in range(6):
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
                text = response.read().decode()
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    if sample.name == "benchhub_http_request_duration_seconds_count":
                        if sample.labels["route"] == "healthz":
                            counts.append(sample.value)
    finally:
        server.stop()
    assert len(_writers(metrics_dir)) >= 2, list(metrics_dir.iterdir())  # both wrote their share
    assert len(set(counts)) == 1 and counts[0] >= 20, counts


def test_the_alert_rules_and_documented_metrics_name_what_metrics_reports(
    client, agent, metrics_on
):
    """Each BenchHub metric that deploy/prometheus/benchhub-rules.yml or docs/deployment.md
    names is one /metrics serves (with a job claimed, a run set aside and a request made, so
    that every family has samples)."""
    queued_job("bench-01")
    assert agent.client.post("/api/v1/jobs/claim/", {}, format="json").status_code == 200
    entry = {"run_uuid": str(uuid.uuid4()), "status": 400}
    agent.client.post("/api/v1/hosts/spool/", {"set_aside": [entry]}, format="json")
    client.get("/healthz")
    served = set(scrape(client))
    rules_file = processes.ROOT / "deploy" / "prometheus" / "benchhub-rules.yml"
    rules = yaml.safe_load(rules_file.read_text())["groups"][0]["rules"]
    named = set()
    for rule in rules:
        named |= set(re.findall(r"\bbenchhub_\w+", rule["expr"]))
    assert len(named) >= 8, named
    text = (processes.ROOT / "docs" / "deployment.md").read_text()
    named |= set(re.findall(r"`(benchhub_\w+)", text))
    families = {name.removesuffix("_bucket").removesuffix("_count") for name in named}
    missing = {n for n in families if n not in served and f"{n}_count" not in served}
    assert not missing, missing
