"""Telling people about a detected change: writes of the Delivery log, email and webhooks.

`regression_notify` records one Delivery per recipient (an email to each subscriber with an
address, a call to each of their webhooks) and queues each on commit; `delivery_attempt` makes one
attempt and raises DeliveryFailed for the task to retry with backoff (regressions.tasks). Both are
idempotent: a delivery is recorded once per recipient and never sent again once delivered.

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
from django.urls import reverse
from django.utils import timezone

from benchhub.regressions.models import Delivery, Regression, Webhook
from benchhub.regressions.selectors import subscribers
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


def regression_url(regression: Regression) -> str:
    return settings.BENCHHUB_BASE_URL.rstrip("/") + reverse(
        "regression", kwargs={"regression_id": regression.pk}
    )


def regression_document(regression: Regression) -> dict[str, Any]:
    """What a notification says about a change: the webhook's `regression` object."""
    return {
        "id": regression.pk,
        "kind": regression.kind,
        "state": regression.state,
        "host": regression.host.name,
        "workload": regression.workload.name,
        "clients": regression.clients,
        "comparability_key": regression.comparability_key,
        "change": regression.change,
        "change_low": regression.change_low,
        "change_high": regression.change_high,
        "before_tps": regression.before_tps,
        "after_tps": regression.after_tps,
        "p_value": regression.p_value,
        "run_before": str(regression.run_before.uuid),
        "run_after": str(regression.run_after.uuid),
        "version_before": regression.run_before.build.version,
        "version_after": regression.run_after.build.version,
        "detected_at": regression.detected_at.isoformat(),
        "url": regression_url(regression),
    }


def regression_notify(*, regression_id: int) -> int:
    """Record a Delivery for every subscriber of the change (their email, their webhooks) and
    queue each on commit; returns how many were recorded now. Running it again records none."""
    regression = (
        Regression.objects.select_related("host", "workload").filter(pk=regression_id).first()
    )
    if regression is None:
        return 0
    recorded = []
    with transaction.atomic():
        people = subscribers(host_name=regression.host.name, workload_name=regression.workload.name)
        for person in people:
            if person.email:
                recorded += _record(regression, person, Delivery.Channel.EMAIL, None, person.email)
            for webhook in person.webhooks.all():
                recorded += _record(
                    regression, person, Delivery.Channel.WEBHOOK, webhook, webhook.url
                )
        for delivery in recorded:
            transaction.on_commit(partial(delivery_enqueue, delivery_id=delivery.pk))
    return len(recorded)


def _record(
    regression: Regression, person: Any, channel: str, webhook: Webhook | None, recipient: str
) -> list[Delivery]:
    delivery, created = Delivery.objects.get_or_create(
        regression=regression,
        user=person,
        channel=channel,
        webhook=webhook,
        defaults={"recipient": recipient},
    )
    return [delivery] if created else []


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
    delivery = (
        Delivery.objects.select_related(
            "webhook",
            "regression",
            "regression__host",
            "regression__workload",
            "regression__run_before__build",
            "regression__run_after__build",
        )
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None or delivery.status == Delivery.Status.DELIVERED:
        return delivery
    delivery.attempts += 1
    delivery.attempted_at = timezone.now()
    try:
        if delivery.channel == Delivery.Channel.EMAIL:
            _send_email(delivery)
        else:
            delivery.response_status = _call_webhook(delivery)
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


def _send_email(delivery: Delivery) -> None:
    regression = delivery.regression
    document = regression_document(regression)
    subject = (
        f"[BenchHub] {regression.kind}: {regression.change:+.1%} tps, {document['workload']} "
        f"on {document['host']} at {regression.clients} clients"
    )
    interval = (
        f" (95% interval {regression.change_low:+.1%} to {regression.change_high:+.1%})"
        if regression.change_low is not None and regression.change_high is not None
        else ""
    )
    body = (
        f"A {regression.kind} was detected: tps changed by {regression.change:+.1%}{interval},\n"
        f"from {regression.before_tps:.1f} to {regression.after_tps:.1f} (mean of the runs "
        f"either side),\nbetween {document['version_before']} (run {document['run_before']})\n"
        f"and {document['version_after']} (run {document['run_after']}).\n\n"
        f"Triage it: {document['url']}\n"
    )
    try:
        send_mail(subject, body, None, [delivery.recipient], fail_silently=False)
    except (OSError, ConnectionError) as exc:
        raise DeliveryFailed(f"mail server: {exc}") from exc


def _call_webhook(delivery: Delivery) -> int:
    assert delivery.webhook is not None
    body = json.dumps(
        {
            "event": f"{delivery.regression.kind}.detected",
            "delivery": delivery.pk,
            "regression": regression_document(delivery.regression),
        },
        sort_keys=True,
    ).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "BenchHub-Webhook/1",
        "X-BenchHub-Event": f"{delivery.regression.kind}.detected",
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
