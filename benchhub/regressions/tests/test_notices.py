"""Alerts told as people triage them: one notice per alert group (a host and commit range)
naming its changes across workloads and client levels, through a real SMTP server process and a
real webhook receiver process; another commit range is a notice of its own; a change confirmed
after its group was told is an update naming only it, and nothing is told twice."""

import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy

import pytest
from django.contrib.auth import get_user_model

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.detection import CONFIRM
from benchhub.regressions.models import AlertGroup, Delivery, Notice, Regression, Subscription
from benchhub.regressions.notifications import delivery_attempt, regression_notify
from benchhub.regressions.services import notify_enqueue, run_detect, subscription_add, webhook_add
from benchhub.regressions.tests.series import noisy
from benchhub.testing.receivers import maildir_messages, webhook_calls

START = datetime(2026, 6, 1, 10, tzinfo=UTC)
RUNS = 14
TPCB = {"name": "tpcb-like", "builtin": "tpcb-like", "query_mode": "prepared"}


def _history(agent, steps: dict[int, float], *, at: int = 8, seed: int = 0, **overrides) -> list:
    """A run a day of versions 14.1 .. 14.14 at each level of `steps`, whose level moves by
    `steps[level]` (-0.2: a 20% loss) from the run of index `at` (14.9 by default) on; another
    workload's runs (`workload` in `overrides`) start an hour after select-only's."""
    values = {
        clients: noisy(1000.0 * clients, at, seed=seed + clients)
        + noisy(1000.0 * clients * (1 + step), RUNS - at, seed=seed + clients + 100)
        for clients, step in steps.items()
    }
    return [
        upload(
            agent,
            version=f"14.{i + 1}",
            tps={c: [v[i]] for c, v in values.items()},
            started_at=(START + timedelta(days=i, hours="workload" in overrides)).isoformat(),
            **overrides,
        )
        for i in range(RUNS)
    ]


def _confirm(runs, capture) -> list[int]:
    """Detect the last run's series CONFIRM times, as CONFIRM uploads would; the ids of the
    changes whose notice was queued."""
    queued = []
    for _ in range(CONFIRM):
        with capture(execute=False) as callbacks:
            run_detect(run_id=runs[-1].pk)
        queued += [
            c.keywords["regression_id"]
            for c in callbacks
            if getattr(c, "func", None) is notify_enqueue
        ]
    return queued


def _tell(queued: list[int]) -> None:
    """What the worker does once the notices have settled: each queued notice task, then each
    delivery it recorded."""
    for regression_id in queued:
        regression_notify(regression_id=regression_id)
    for delivery in Delivery.objects.filter(status="pending").order_by("id"):
        delivery_attempt(delivery_id=delivery.pk, last=True)


@pytest.fixture
def told(db, settings, smtp_server, receiver):
    """alice (every change on bench-01) by email and webhook, carol (tpcb-like only) by email;
    mail goes through the real SMTP server, calls to the real receiver. Returns a reader of
    (emails, webhook calls, alice's webhook secret)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", smtp_server[0]
    settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE = True
    users = get_user_model().objects
    alice = users.create_user("alice-told", email="alice@example.com")
    carol = users.create_user("carol-told", email="carol@example.com")
    subscription_add(user=alice, host_name="bench-01")
    # Before tpcb-like's first run is uploaded: the service would ask for a workload that exists.
    Subscription.objects.create(user=carol, workload_name="tpcb-like")
    webhook = webhook_add(user=alice, url=f"http://127.0.0.1:{receiver[0]}/hook")

    def read():
        emails = [
            message_from_bytes(m.as_bytes(), policy=policy.default)
            for m in maildir_messages(smtp_server[1])
        ]
        return emails, webhook_calls(receiver[1]), webhook.secret

    return read


def _body(email) -> str:
    return email.get_content()


def _subject(email) -> str:
    """The subject up to its worst change, whose last digit the noise decides."""
    return email["Subject"].strip().rsplit(", worst", 1)[0]


def test_it_tells_one_alert_across_workloads_and_levels_in_one_notice(
    agent, told, django_capture_on_commit_callbacks
):
    started = time.monotonic()
    # 14.9 loses 20% of select-only at 1 and 4 clients, gains 15% at 16; loses 10% of
    # tpcb-like at every level: six changes, one host and commit range.
    select_only = _history(agent, {1: -0.2, 4: -0.2, 16: 0.15})
    tpcb = _history(agent, {1: -0.1, 4: -0.1, 16: -0.1}, seed=50, workload=TPCB)
    queued = _confirm(select_only, django_capture_on_commit_callbacks)
    queued += _confirm(tpcb, django_capture_on_commit_callbacks)
    assert len(queued) == 6  # each change queues its group's notice once it is confirmed

    _tell(queued)

    (group,) = AlertGroup.objects.all()
    (notice,) = Notice.objects.all()
    assert (group.members, group.direction, notice.group, notice.update) == (
        6,
        "mixed",
        group,
        False,
    )
    assert set(Regression.objects.values_list("notice", flat=True)) == {notice.pk}
    emails, calls, secret = told()
    assert sorted(e["To"] for e in emails) == ["alice@example.com", "carol@example.com"]
    assert {_subject(e) for e in emails} == {"[BenchHub] mixed on bench-01, 14.8 → 14.9: 6 changes"}
    assert "worst -20." in emails[0]["Subject"]
    body = _body(emails[0])
    for line in (
        "select-only at 1 client: regression -",
        "select-only at 4 clients: regression -",
        "select-only at 16 clients: improvement +",
        "tpcb-like at 1 client: regression -",
        "tpcb-like at 4 clients: regression -",
        "tpcb-like at 16 clients: regression -",
    ):
        assert line in body, body
    assert f"/regressions/?group={group.pk}" in body
    (call,) = calls
    digest = hmac.new(secret.encode(), call["body"].encode(), hashlib.sha256).hexdigest()
    assert call["headers"]["X-BenchHub-Signature-256"] == f"sha256={digest}"
    document = json.loads(call["body"])
    assert (document["event"], document["notice"]["direction"]) == ("alert.detected", "mixed")
    assert document["notice"]["group"] == {"id": group.pk, "direction": "mixed", "members": 6}
    members = {(m["workload"], m["clients"], m["kind"]) for m in document["notice"]["members"]}
    assert len(members) == 6 and ("select-only", 16, "improvement") in members
    print(f"one notice for six changes: {time.monotonic() - started:.1f} s")


def test_it_tells_another_commit_range_in_a_notice_of_its_own(
    agent, told, django_capture_on_commit_callbacks
):
    # select-only steps at 14.9, tpcb-like at 14.6: two commit ranges, two alerts.
    select_only = _history(agent, {1: -0.2, 4: -0.2})
    tpcb = _history(agent, {1: -0.1, 4: -0.1}, at=5, seed=50, workload=TPCB)
    queued = _confirm(select_only, django_capture_on_commit_callbacks)
    queued += _confirm(tpcb, django_capture_on_commit_callbacks)

    _tell(queued)

    groups = {g.build_after.version: g for g in AlertGroup.objects.select_related("build_after")}
    assert sorted(groups) == ["14.6", "14.9"]
    assert Notice.objects.count() == 2
    emails, calls, _ = told()
    alice = sorted(_subject(e) for e in emails if e["To"] == "alice@example.com")
    assert alice == [
        "[BenchHub] regression on bench-01, 14.5 → 14.6: 2 changes",
        "[BenchHub] regression on bench-01, 14.8 → 14.9: 2 changes",
    ]
    (carol,) = [e for e in emails if e["To"] == "carol@example.com"]  # tpcb-like's only
    assert f"/regressions/?group={groups['14.6'].pk}" in _body(carol)
    urls = sorted(json.loads(c["body"])["notice"]["url"] for c in calls)
    assert [u.rsplit("=", 1)[1] for u in urls] == sorted(str(g.pk) for g in groups.values())


def test_it_tells_a_change_confirmed_after_its_alert_in_an_update_naming_only_it(
    agent, told, django_capture_on_commit_callbacks
):
    select_only = _history(agent, {1: -0.2, 4: -0.2})
    _tell(_confirm(select_only, django_capture_on_commit_callbacks))
    # tpcb-like's runs of the same builds arrive after the alert was told.
    tpcb = _history(agent, {1: -0.1}, seed=50, workload=TPCB)
    queued = _confirm(tpcb, django_capture_on_commit_callbacks)
    _tell(queued)
    _tell(queued)  # a task run twice (a retry) finds nothing left to tell

    first, update = Notice.objects.order_by("id")
    assert (first.update, update.update, first.group_id) == (False, True, update.group_id)
    assert [r.clients for r in update.members.all()] == [1]
    emails, calls, _ = told()
    update_subject = (
        f"[BenchHub] alert #{first.group_id} update: regression on bench-01, 14.8 → 14.9: "
        "1 more change"
    )
    assert sorted((e["To"], _subject(e)) for e in emails) == [
        ("alice@example.com", update_subject),
        ("alice@example.com", "[BenchHub] regression on bench-01, 14.8 → 14.9: 2 changes"),
        ("carol@example.com", update_subject),
    ]
    update_body = _body(next(e for e in emails if e["To"] == "carol@example.com"))
    assert "tpcb-like at 1 client:" in update_body and "select-only" not in update_body
    assert "The alert holds 3 changes now (regression)" in update_body
    events = [json.loads(c["body"])["event"] for c in calls]
    assert events == ["alert.detected", "alert.updated"]


def test_it_tells_a_drift_alone(agent, told):
    runs = _history(agent, {4: 0.0})
    drift = Regression.objects.create(
        kind="drift",
        comparability_key=runs[-1].comparability_key,
        clients=4,
        host=runs[-1].host,
        workload=runs[-1].workload,
        run_before=runs[0],
        run_after=runs[-1],
        before_tps=1000.0,
        after_tps=990.0,
        before_runs=7,
        after_runs=7,
        change=-0.01,
        p_value=1e-4,
        per_week=-0.005,
        detections=CONFIRM,
        confirmed_at=START,
    )

    _tell([drift.pk, drift.pk])

    (notice,) = Notice.objects.all()
    assert notice.group is None and list(notice.members.all()) == [drift]
    emails, calls, _ = told()
    (email,) = emails
    assert email["Subject"].strip() == (
        "[BenchHub] drift: -0.5% tps a week, select-only on bench-01 at 4 clients"
    )
    assert f"/regressions/{drift.pk}/" in _body(email)
    (call,) = calls
    assert json.loads(call["body"])["event"] == "drift.detected"
