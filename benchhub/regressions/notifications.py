"""Telling people about detected changes: notices, writes of the Delivery log, email and webhooks.

The unit told is the alert, as people triage it: `regression_notify` writes one Notice naming
every change of an alert group (a host and commit range) that is confirmed and not told yet, or
a drift alone, and records one Delivery per recipient of it (an email to each subscriber with an
address, a call to each of their webhooks), each queued on commit; `delivery_attempt` makes one
attempt and raises DeliveryFailed for the task to retry with backoff (regressions.tasks). Each
change is told once (its `notice`), each notice once per recipient, and a delivered one is
never sent again. What a notice says is regressions.notices'.

A webhook call is a POST of a JSON body with `X-BenchHub-Signature-256: sha256=<hex>`, the
HMAC-SHA256 of the exact body bytes under the webhook's secret (docs/regressions.md). The URL is
a person's input that the server calls (docs/security.md): read one way only (webhook_url), only
http and https, a time-out, no redirects followed, addresses that are not public refused unless
the operator allows them (BENCHHUB_WEBHOOK_ALLOW_PRIVATE), and the connection made to the address
that was checked, not to a second lookup of the name.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from functools import partial
from typing import Any

import certifi
import urllib3
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from benchhub.regressions.models import AlertGroup, Delivery, Notice, Regression, Webhook
from benchhub.regressions.notices import notice_document, notice_email, notice_event
from benchhub.regressions.selectors import notice_read, subscribers
from benchhub.regressions.webhook_url import WebhookURL, webhook_resolve, webhook_url_parse

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-BenchHub-Signature-256"
TIMEOUT_S = 5.0
MAX_ERROR = 500


class DeliveryFailed(Exception):
    """An attempt that may succeed later (network error, time-out, 5xx/429 answer)."""


def signature(*, secret: str, body: bytes) -> str:
    """The signature header's value: "sha256=" and the hex HMAC-SHA256 of the body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def regression_notify(*, regression_id: int) -> int:
    """Tell the subscribers of a confirmed change's alert. For a change filed in an alert group:
    one Notice naming every change of the group that is due (confirmed, `confirmed_at`; not told
    yet; not withdrawn), an `update` when the group was told before; for a drift, the drift
    alone. One Delivery per recipient: each active person subscribed to the host and to any
    named change's workload, once. Returns how many deliveries were recorded: 0 when nothing
    was due (another task told it already). One transaction: the group's row, then the due
    changes, are locked, so two tasks of one group never tell a change twice; deliveries are
    queued on commit."""
    regression = Regression.objects.filter(pk=regression_id).only("group_id", "kind").first()
    if regression is None:
        return 0
    with transaction.atomic():
        group = None
        due = Regression.objects.filter(pk=regression_id)
        if regression.group_id is not None and regression.kind != Regression.Kind.DRIFT:
            group = AlertGroup.objects.select_for_update().filter(pk=regression.group_id).first()
            # Filtering on a group that was deleted meanwhile would read every ungrouped change.
            if group is not None:
                due = Regression.objects.filter(group=group)
        members = list(
            # The changes only: their host's and workload's rows are for agents and uploads.
            due.select_for_update(of=("self",))
            .filter(confirmed_at__isnull=False, notice__isnull=True)
            .exclude(state=Regression.State.WITHDRAWN)
            .select_related("host", "workload")
            .order_by("id")
        )
        if not members:
            return 0
        notice = Notice.objects.create(
            group=group, update=group is not None and group.notices.exists()
        )
        Regression.objects.filter(pk__in=[m.pk for m in members]).update(notice=notice)
        recorded = _record_all(notice, members)
        for delivery in recorded:
            transaction.on_commit(partial(delivery_enqueue, delivery_id=delivery.pk))
    return len(recorded)


def _record_all(notice: Notice, members: list[Regression]) -> list[Delivery]:
    people = subscribers(
        host_name=members[0].host.name,
        workload_names=sorted({m.workload.name for m in members}),
    )
    recorded = []
    for person in people:
        if person.email:
            recorded.append(_record(notice, person, Delivery.Channel.EMAIL, None, person.email))
        for webhook in person.webhooks.all():
            recorded.append(_record(notice, person, Delivery.Channel.WEBHOOK, webhook, webhook.url))
    return recorded


def _record(
    notice: Notice, person: Any, channel: str, webhook: Webhook | None, recipient: str
) -> Delivery:
    return Delivery.objects.create(
        notice=notice, user=person, channel=channel, webhook=webhook, recipient=recipient
    )


def delivery_enqueue(*, delivery_id: int) -> None:
    from benchhub.regressions.tasks import deliver

    try:
        deliver.apply_async(args=(delivery_id,))
    except Exception:
        logger.warning("could not queue delivery %s", delivery_id, exc_info=True)


def delivery_attempt(*, delivery_id: int, last: bool = False) -> Delivery | None:
    """One attempt at a delivery. Success marks it delivered; a failure worth retrying raises
    DeliveryFailed after recording it (status "failed" instead when `last`); a refusal that no
    retry changes (a 4xx answer, an address not allowed) marks it failed at once."""
    delivery = Delivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status == Delivery.Status.DELIVERED:
        return delivery
    read = notice_read(notice_id=delivery.notice_id)
    assert read is not None  # a delivery is deleted with its notice
    notice, members = read
    delivery.attempts += 1
    delivery.attempted_at = timezone.now()
    try:
        if delivery.channel == Delivery.Channel.EMAIL:
            _send_email(delivery, notice, members)
        else:
            delivery.response_status = _call_webhook(delivery, notice, members)
    except _Refused as exc:
        _finish(delivery, status=Delivery.Status.FAILED, error=str(exc))
        return delivery
    except DeliveryFailed as exc:
        status = Delivery.Status.FAILED if last else Delivery.Status.PENDING
        _finish(delivery, status=status, error=str(exc))
        raise
    _finish(delivery, status=Delivery.Status.DELIVERED, error="")
    return delivery


def _finish(delivery: Delivery, *, status: str, error: str) -> None:
    delivery.status, delivery.error = status, error[:MAX_ERROR]
    if status == Delivery.Status.DELIVERED:
        delivery.delivered_at = timezone.now()
    delivery.save(
        update_fields=[
            "status",
            "error",
            "attempts",
            "attempted_at",
            "delivered_at",
            "response_status",
        ]
    )


class _Refused(Exception):
    """A delivery no retry would change."""


def _send_email(delivery: Delivery, notice: Notice, members: list[Regression]) -> None:
    subject, body = notice_email(notice, members)
    try:
        send_mail(subject, body, None, [delivery.recipient], fail_silently=False)
    except (OSError, ConnectionError) as exc:
        raise DeliveryFailed(f"mail server: {exc}") from exc


def _call_webhook(delivery: Delivery, notice: Notice, members: list[Regression]) -> int:
    assert delivery.webhook is not None
    event = notice_event(notice)
    body = json.dumps(
        {"event": event, "delivery": delivery.pk, "notice": notice_document(notice, members)},
        sort_keys=True,
    ).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "BenchHub-Webhook/1",
        "X-BenchHub-Event": event,
        "X-BenchHub-Delivery": str(delivery.pk),
        SIGNATURE_HEADER: signature(secret=delivery.webhook.secret, body=body),
    }
    status = _post(delivery.webhook.url, body=body, headers=headers)
    delivery.response_status = status
    if status >= 500 or status in (408, 429):
        raise DeliveryFailed(f"answered {status}")
    if status >= 300:
        raise _Refused(f"answered {status}")
    return status


def _post(url: str, *, body: bytes, headers: dict[str, str]) -> int:
    """POST to the address the URL's one reading resolved to and was checked at; the answer's
    status (its body is never read: a receiver could send gigabytes)."""
    try:
        parsed = webhook_url_parse(url)
    except ValueError as exc:
        raise _Refused(str(exc)) from exc
    try:
        address = webhook_resolve(parsed, allow_private=settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE)
    except LookupError as exc:
        raise DeliveryFailed(str(exc)) from exc
    except PermissionError as exc:
        raise _Refused(str(exc)) from exc
    pool = _pool(parsed, address)
    try:
        response = pool.urlopen(
            "POST",
            parsed.target,
            body=body,
            headers={**headers, "Host": parsed.host_header},
            redirect=False,
            retries=False,
            preload_content=False,
            assert_same_host=False,
        )
        response.release_conn()
    except urllib3.exceptions.HTTPError as exc:
        raise DeliveryFailed(f"{type(exc).__name__}: {exc}") from exc
    finally:
        pool.close()
    return int(response.status)


def _pool(parsed: WebhookURL, address: str) -> urllib3.HTTPConnectionPool:
    """A connection to `address` that speaks to it as `parsed.host` (TLS: its certificate is
    checked against the name, the name is sent as SNI)."""
    timeout = urllib3.Timeout(connect=TIMEOUT_S, read=TIMEOUT_S)
    if parsed.scheme == "http":
        return urllib3.HTTPConnectionPool(address, parsed.port, timeout=timeout, maxsize=1)
    return urllib3.HTTPSConnectionPool(
        address,
        parsed.port,
        timeout=timeout,
        maxsize=1,
        cert_reqs="CERT_REQUIRED",
        ca_certs=certifi.where(),
        server_hostname=parsed.host,
        assert_hostname=parsed.host,
    )
