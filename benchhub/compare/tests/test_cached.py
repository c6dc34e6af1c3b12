"""The comparisons kept in the cache (compare.selectors.cached), in the real Redis: what the cache
answers is what computing answers, every change to what a comparison reads gives a new key (so
the next answer is computed again), and Redis going away leaves the pages answering.

Each test reads the compare API twice (the second read must come from the cache: one query),
changes something the comparison reads, and reads it again: that answer must be the one computed
with the cache off, and differ from the first."""

import json
from datetime import timedelta

import numpy as np
import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchhub.compare.selectors import cached
from benchhub.compare.tests.uploads import seconds_result, upload, upload_evidence
from benchhub.results.models import (
    ProgressSeries,
    ResultEvidence,
    ResultOutput,
    ResultTelemetry,
    Run,
)
from benchhub.results.partitions import partitions_ensure, retention_apply
from benchhub.results.services import run_aggregate
from benchhub.review.services import run_mark, run_tag_add
from benchhub.testing.payloads import run_payload
from benchhub.testing.private import PrivateRedis

QUERY = "workload=select-only&host=bench-01&versions=13.3,15.4"
URL = f"/api/v1/compare/?{QUERY}"
PAGE = f"/compare/?{QUERY}"
# Before the payloads' own start: the run uploaded last with the default is the newest.
EARLIER = "2026-11-19T10:00:00Z"


def cached_body(client, url: str = URL) -> dict:
    """The API's answer as the cache gives it: asked twice, the second time from the cache."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    assert len(queries.captured_queries) == 1, "the second read was not the cache's"
    return response.json()


def computed_body(client, settings, url: str = URL) -> dict:
    """The API's answer computed, the cache off."""
    kept = settings.COMPARE_CACHE_S
    settings.COMPARE_CACHE_S = 0
    try:
        return client.get(url).json()
    finally:
        settings.COMPARE_CACHE_S = kept


def levels(body: dict) -> dict[int, list]:
    return {row["clients"]: [v["tps"] for v in row["versions"]] for row in body["rows"]}


@pytest.fixture
def two_versions(agent):
    base = upload(agent, version="13.3", tps={1: [100, 104, 98], 4: [400, 410, 395]})
    new = upload(agent, version="15.4", tps={1: [110, 112, 109], 4: [404, 399, 412]})
    return base, new


def test_it_answers_from_the_cache_what_it_computes(anon_client, settings, two_versions):
    body = cached_body(anon_client)
    assert body == computed_body(anon_client, settings)
    assert body["rows"][0]["versions"][1]["verdict"] == "faster"
    # The threshold shapes the verdicts: another one is another answer, not the first's.
    wide = cached_body(anon_client, f"{URL}&threshold=20")
    assert wide == computed_body(anon_client, settings, f"{URL}&threshold=20")
    assert wide["threshold_pct"] == 20 and wide["rows"][0]["versions"][1]["verdict"] == "same"


def test_it_serves_the_page_from_the_cache_as_computed(client, settings, two_versions):
    client.get(PAGE)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(PAGE).content.decode()
    # The comparison's state, its comment thread, the form's lists: nothing of the comparison.
    assert len(queries.captured_queries) == 3
    settings.COMPARE_CACHE_S = 0
    assert page == client.get(PAGE).content.decode()


def test_a_new_run_of_a_compared_version_gives_a_new_answer(anon_client, settings, agent):
    upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER)
    upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER)
    before = cached_body(anon_client)
    upload(agent, version="15.4", tps={1: [90, 91, 92]})
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert len(after["series"][1]["pooled_runs"]) == 2
    assert levels(after) != levels(before)


def test_a_run_marked_invalid_or_valid_again_gives_a_new_answer(anon_client, settings, agent, bob):
    upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER)
    upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER)
    newest = upload(agent, version="15.4", tps={1: [90, 91, 92]})
    before = cached_body(anon_client)
    run_mark(run=newest, invalid=True, actor=bob, reason="the host was swapping")
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert len(after["series"][1]["pooled_runs"]) == 1 != len(before["series"][1]["pooled_runs"])
    run_mark(run=newest, invalid=False, actor=bob, reason="it was not")
    assert cached_body(anon_client) == before


def test_a_deleted_run_gives_a_new_answer(anon_client, settings, agent):
    upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER)
    upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER)
    newest = upload(agent, version="15.4", tps={1: [90, 91, 92]})
    before = cached_body(anon_client)
    Run.objects.filter(pk=newest.pk).delete()  # as the admin deletes a run
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert levels(after) != levels(before)


def _post_unaggregated(agent, version: str, tps: float, seed: int) -> Run:
    """A run of three repeats at 1 client, 30 per-second samples each around `tps`, as the
    upload stores it before the worker aggregates it (no within-run errors yet)."""
    rng = np.random.default_rng(seed)
    results = [
        seconds_result(1, repeat, list(tps * (1 + 0.05 * rng.standard_normal(30))))
        for repeat in (1, 2, 3)
    ]
    payload = run_payload(version=version, host=agent.host_name, clients=(1,), repeats=3)
    payload.update(results=results, duration_s=30.0)
    response = agent.client.post(
        "/api/v1/runs/", data=json.dumps(payload), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return Run.objects.get(uuid=payload["run_uuid"])


def test_aggregating_a_run_gives_a_new_answer(anon_client, settings, agent):
    base = _post_unaggregated(agent, "13.3", 1000.0, seed=1)
    new = _post_unaggregated(agent, "15.4", 1030.0, seed=2)
    before = cached_body(anon_client)
    # The worker adds each repeat's within-run error, which the level's interval is made of.
    run_aggregate(run_id=base.id)
    run_aggregate(run_id=new.id)
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert after["verdicts"][0]["levels"] != before["verdicts"][0]["levels"]


def test_a_run_of_the_host_history_gives_a_new_answer(anon_client, settings, agent):
    upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER)
    upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER)
    before = cached_body(anon_client)
    # Another build under the same key: the host's run-to-run noise the verdicts pool in.
    upload(agent, version="14.0", tps={1: [80, 120, 100]})
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert after["noise"] != before["noise"]


def test_a_tag_asked_for_gives_a_new_answer_when_a_run_gets_it(anon_client, settings, agent, bob):
    runs = [
        upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER),
        upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER),
    ]
    later = upload(agent, version="15.4", tps={1: [90, 91, 92]})
    for run in runs:
        run_tag_add(run=run, name="nightly", actor=bob)
    url = f"{URL}&tag=nightly"
    before = cached_body(anon_client, url)
    run_tag_add(run=later, name="nightly", actor=bob)
    after = cached_body(anon_client, url)
    assert after == computed_body(anon_client, settings, url)
    assert after["series"][1]["run"] == str(later.uuid) != before["series"][1]["run"]


def test_retention_dropping_the_evidence_gives_a_new_answer(anon_client, settings, agent):
    for version, tps in (("13.3", 100.0), ("15.4", 110.0)):
        upload_evidence(
            agent, version=version, tps={1: [tps, tps]}, waits={}, folded="main;f 1", p99=4
        )
    when = timezone.now() - timedelta(days=8 * 31)
    partitions_ensure(first=when)
    Run.objects.update(created_at=when)
    for model in (ResultEvidence, ResultOutput, ProgressSeries, ResultTelemetry):
        model.objects.update(created_at=when)
    before = cached_body(anon_client)
    assert before["rows"][0]["versions"][0]["latency_p99_ms"] == 4
    retention_apply(keep_months=3)
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert after["rows"][0]["versions"][0]["latency_p99_ms"] is None


def test_it_stores_nothing_larger_than_its_bound(anon_client, two_versions, monkeypatch):
    monkeypatch.setattr(cached, "MAX_CACHED_BYTES", 100)
    anon_client.get(URL)
    with CaptureQueriesContext(connection) as queries:
        assert anon_client.get(URL).status_code == 200
    assert len(queries.captured_queries) > 1


def test_it_keeps_an_answer_no_longer_than_its_time(anon_client, settings, two_versions):
    settings.COMPARE_CACHE_S = 120
    anon_client.get(URL)
    server = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    [key] = server.keys(f"{prefix}:*:{cached.CACHE_PREFIX}:*")
    assert 0 < server.ttl(key) <= 120


def test_the_page_and_the_api_answer_while_redis_is_down(anon_client, settings, two_versions):
    own = PrivateRedis().start()
    try:
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": own.url}}
        stored = cached_body(anon_client)
        assert anon_client.get(PAGE).status_code == 200
        own.stop()
        for _ in range(2):
            assert anon_client.get(URL).json() == stored
            response = anon_client.get(PAGE)
            assert response.status_code == 200
            assert b"tps-figure" in response.content
    finally:
        own.stop()


def test_an_edit_of_any_column_of_a_run_gives_a_new_answer(anon_client, settings, agent):
    """No service changes a run's warm-up after its upload; an edit in the admin or in SQL
    does, and the run's row version (PostgreSQL's xmin) is in the key for such writes."""
    upload(agent, version="13.3", tps={1: [100, 104, 98]}, started_at=EARLIER)
    upload(agent, version="15.4", tps={1: [110, 112, 109]}, started_at=EARLIER)
    newest = upload(agent, version="15.4", tps={1: [90, 91, 92]})
    before = cached_body(anon_client)
    Run.objects.filter(pk=newest.pk).update(warmup_s=30)
    after = cached_body(anon_client)
    assert after == computed_body(anon_client, settings)
    assert after["left_out"] != before["left_out"]
