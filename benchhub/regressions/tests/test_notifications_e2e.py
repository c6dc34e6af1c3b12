"""End to end: a history with a step uploaded through the API; a real Celery worker aggregates,
detects the regression and tells its subscriber by email (a real SMTP server process) and by
webhook (a real HTTP server process, which fails the first call so the retry is exercised);
then the regression is triaged in a real browser."""

import hashlib
import hmac
import json
import sys
import tempfile
import time
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchhub.regressions.models import Delivery, Regression, RegressionEvent
from benchhub.regressions.services import subscription_add, webhook_add
from benchhub.regressions.tests.series import noisy
from benchhub.testing import processes
from benchhub.testing.browser import screenshot, sign_in
from benchhub.testing.payloads import result, run_payload
from benchhub.testing.receivers import maildir_messages, wait_for, webhook_calls

BEFORE = noisy(1000.0, 8, seed=11)
AFTER = noisy(800.0, 6, seed=12)
WAIT_S = 90


@pytest.fixture
def webhook_receiver():
    """A real HTTP receiver process that answers 503 to its first call, 200 after."""
    port, log = processes.free_port(), Path(tempfile.mkdtemp(prefix="benchhub-hook-")) / "calls"
    argv = [sys.executable, "-m", "benchhub.testing.receivers", str(port), str(log), "1"]
    server = processes.local_server(argv, port=port, name="webhook-receiver")
    yield f"http://127.0.0.1:{port}/hooks/benchhub", log
    server.stop()


@pytest.fixture
def notifying_worker(request, monkeypatch, settings, smtp_server, webhook_receiver):
    """The analysis worker, sending mail through the test's SMTP server and allowed to call the
    receiver on 127.0.0.1 (refused by default: docs/security.md); this process too, where the
    webhook is added through the service that checks its address. Notices go out as soon as a
    change is confirmed (no settling wait: the history has one series)."""
    monkeypatch.setenv("BENCHHUB_NOTICE_SETTLE_S", "0")
    monkeypatch.setenv("EMAIL_HOST", "127.0.0.1")
    monkeypatch.setenv("EMAIL_PORT", str(smtp_server[0]))
    monkeypatch.setenv("BENCHHUB_WEBHOOK_ALLOW_PRIVATE", "1")
    settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE = True
    return request.getfixturevalue("analysis_worker")


def _upload_history(agent) -> list[str]:
    uuids = []
    for i, tps in enumerate(BEFORE + AFTER, start=1):
        payload = run_payload(
            version=f"14.{i}",
            host=agent.host_name,
            clients=(4,),
            repeats=1,
            started_at=f"2026-10-{i:02d}T10:00:00Z",
            finished_at=f"2026-10-{i:02d}T10:05:00Z",
        )
        payload["results"] = [result(4, 1, tps)]
        response = agent.client.post("/api/v1/runs/", payload, format="json")
        assert response.status_code == 201, response.content
        uuids.append(payload["run_uuid"])
    return uuids  # fmt: skip


@pytest.mark.slow
def test_it_detects_tells_and_triages_a_regression(
    notifying_worker, smtp_server, webhook_receiver, agent, alice, live_server, page
):
    started = time.monotonic()
    alice.email = "alice@example.com"
    alice.save(update_fields=["email"])
    subscription_add(user=alice, host_name="bench-01")
    webhook = webhook_add(user=alice, url=webhook_receiver[0])

    uuids = _upload_history(agent)
    regression = wait_for(
        lambda: Regression.objects.select_related("run_after").first(),
        timeout_s=WAIT_S,
        what="the regression",
    )
    assert regression.kind == "regression"
    assert str(regression.run_after.uuid) == uuids[8]
    assert regression.change_low < sum(AFTER) / 6 / (sum(BEFORE) / 8) - 1 < regression.change_high

    [message] = wait_for(
        lambda: maildir_messages(smtp_server[1]), timeout_s=WAIT_S, what="the email"
    )
    email = message_from_bytes(message.as_bytes(), policy=policy.default)
    assert email["To"] == "alice@example.com"
    assert "regression on bench-01" in email["Subject"] and "1 change" in email["Subject"]
    assert f"/regressions/?group={regression.group_id}" in email.get_content()

    # The receiver answers 503 to the first call: Celery retries it after its backoff.
    calls = wait_for(
        lambda: [c for c in webhook_calls(webhook_receiver[1]) if c["status"] == 200],
        timeout_s=WAIT_S,
        what="a webhook call answered 200",
    )
    assert len(webhook_calls(webhook_receiver[1])) == 2
    body = calls[0]["body"].encode()
    expected = "sha256=" + hmac.new(webhook.secret.encode(), body, hashlib.sha256).hexdigest()
    assert calls[0]["headers"]["X-BenchHub-Signature-256"] == expected
    document = json.loads(body)
    assert document["event"] == "alert.detected"
    [member] = document["notice"]["members"]
    assert (member["id"], member["run_after"]) == (regression.pk, uuids[8])
    hook = wait_for(
        lambda: Delivery.objects.filter(channel="webhook", status="delivered").first(),
        timeout_s=10,
        what="the webhook delivery logged",
    )
    assert hook.attempts == 2 and hook.response_status == 200
    assert Regression.objects.count() == 1  # every later upload detected it again

    sign_in(page, live_server.url, "alice", "alice-pass-1")
    page.goto(f"{live_server.url}/history/?host=bench-01&workload=select-only&clients=4")
    expect(page.locator("#history-chart .shapelayer path")).to_have_count(1)
    screenshot(page, "history-with-regression")
    page.goto(f"{live_server.url}/regressions/?state=new&host=bench-01")
    row = page.locator(f'tr[data-regression="{regression.pk}"]')
    expect(row.locator(".state")).to_have_text("new")
    row.locator("a").first.click()
    page.select_option("#id_state", "investigating")
    page.fill("#id_note", "bisecting 14.8..14.9")
    page.click("#regression-triage button[type=submit]")
    expect(page.locator("#regression-state")).to_have_text("investigating")
    expect(page.locator("#regression-log tbody tr")).to_have_count(1)
    expect(page.locator("#regression-log")).to_contain_text("bisecting 14.8..14.9")
    screenshot(page, "regression-triaged")
    page.goto(f"{live_server.url}/regressions/subscriptions/")
    expect(page.locator("#deliveries-table .status")).to_have_text(["delivered", "delivered"])
    event = RegressionEvent.objects.get()
    assert (event.actor, event.from_state, event.to_state) == (alice, "new", "investigating")
    print(f"end-to-end regression test: {time.monotonic() - started:.1f} s")
