"""Writes for regressions: detection after an upload, triage, subscriptions and webhooks.

Detection (`run_detect`) is idempotent: a change already stored for its series and first run
after is updated (its figures, if still new), never added twice; a stored change whose runs
before and after lie either side of a split (stored under an older rule) is withdrawn, with the
reason. A change confirmed by enough detections is marked due, and its alert's notice queued
(regressions.notifications) after the transaction commits.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import replace
from functools import partial
from typing import Any

from benchhub_runner.transport.urlpolicy import host_refusal
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from benchhub.compare.splits import Split
from benchhub.errors import ApplicationError
from benchhub.hosts.models import Host, host_name_key
from benchhub.regressions.detection import CONFIRM, MOVE_RUNS, Change, series_changes
from benchhub.regressions.drifts import drift_store, series_drift
from benchhub.regressions.grouping import group_file, group_refresh
from benchhub.regressions.models import (
    MAX_NOTE,
    MAX_WEBHOOK_URL,
    Regression,
    RegressionEvent,
    Subscription,
    Webhook,
)
from benchhub.regressions.selectors import Series, SeriesPoint, series_points
from benchhub.regressions.webhook_url import OPT_IN as WEBHOOK_OPT_IN
from benchhub.regressions.webhook_url import webhook_url_parse
from benchhub.results.models import LevelAggregate, Run
from benchhub.workloads.models import Workload

logger = logging.getLogger(__name__)

MAX_SUBSCRIPTIONS = 100
MAX_WEBHOOKS = 10
# The kinds a change point stores; a drift is stored by regressions.drifts.
STEP_KINDS = (Regression.Kind.REGRESSION, Regression.Kind.IMPROVEMENT)


class RegressionError(ApplicationError):
    """A triage, subscription or webhook request the domain refuses."""


class TriageForbidden(RegressionError):
    status = 403


def can_triage(user: Any) -> bool:
    """Staff, or a person granted the regressions.change_regression permission."""
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return False
    return bool(user.is_staff or user.has_perm("regressions.change_regression"))


# Detection ---------------------------------------------------------------------------------


def _anchored(series: Series) -> tuple[list[SeriesPoint], list[Split], int | None]:
    """The series from its newest baseline mark on (the baseline anchors "before") with the
    splits after it, and the baseline's run id; the whole series without a mark."""
    points = series.points
    marks = [i for i, p in enumerate(points) if p.baseline]
    if not marks:
        return points, series.splits, None
    start = marks[-1]
    splits = [
        replace(split, index=split.index - start) for split in series.splits if split.index > start
    ]
    return points[start:], splits, points[start].run_id


def _changes(points: list[SeriesPoint], splits: list[Split]) -> list[Change]:
    """The changes of each segment between splits (detection.series_changes), indexed in the
    whole series."""
    return series_changes(values=[p.tps for p in points], splits=[s.index for s in splits])


def series_detect(
    *, comparability_key: str, clients: int, host_id: int, notify: bool = True
) -> list[Regression]:
    """Detect the changes of one series (a comparability key at one client level on one host,
    as History draws it, in time order, per segment between its splits) and store each as a
    Regression or Improvement, and its drift (regressions.drifts); returns those created now.
    One transaction; queues on commit the notification of each change this detection confirms
    (the CONFIRMth to find it; none when `notify` is false: a backfill of old history).
    Withdraws the stored changes of the series that span a split first
    (series_withdraw_spanning)."""
    series = series_points(comparability_key=comparability_key, clients=clients, host_id=host_id)
    series_withdraw_spanning(
        series=series, comparability_key=comparability_key, clients=clients, host_id=host_id
    )
    points, splits, baseline_id = _anchored(series)
    found = _changes(points, splits)
    drifting = series_drift(points[max([0, *(s.index for s in splits)]) :])
    if not found and drifting is None:
        return []
    sample = Run.objects.only("host_id", "workload_id").get(pk=points[-1].run_id)
    stored: list[tuple[Regression, bool, bool]] = []
    with transaction.atomic():
        for change in found:
            regression, new = _store(
                comparability_key=comparability_key,
                clients=clients,
                change=change,
                points=points,
                baseline_id=baseline_id,
                host_id=sample.host_id,
                workload_id=sample.workload_id,
            )
            group_file(regression=regression)
            stored.append((regression, new, change.agreed))
        if drifting is not None:
            drifted, new = drift_store(
                comparability_key=comparability_key,
                clients=clients,
                host_id=sample.host_id,
                workload_id=sample.workload_id,
                points=points[max([0, *(s.index for s in splits)]) :],
                found=drifting,
            )
            if drifted is not None:
                stored.append((drifted, new, True))
        _confirm(stored, notify=notify)
    return [regression for regression, new, _ in stored if new]


def _confirm(stored: list[tuple[Regression, bool, bool]], *, notify: bool) -> None:
    """Count this detection for each change it found (added or found again) when the windowed
    test agreed (detection.Change.agreed; a drift always counts), and mark those it confirmed
    (found by CONFIRM such detections now) due to be told (`confirmed_at`), queueing their
    alert's notice (regressions.notifications.regression_notify) on commit. A backfill (`notify`
    false) confirms what it adds without telling anyone, so later uploads do not send old news."""
    for regression, new, agreed in stored:
        if new and not notify:
            regression.detections = max(regression.detections, CONFIRM)
        elif new:
            regression.detections = int(agreed)
        elif agreed:
            regression.detections += 1
        else:
            continue
        fields = ["detections"]
        if notify and agreed and regression.detections == CONFIRM:
            regression.confirmed_at = timezone.now()
            fields.append("confirmed_at")
            transaction.on_commit(partial(notify_enqueue, regression_id=regression.pk))
        regression.save(update_fields=fields)


def _store(
    *,
    comparability_key: str,
    clients: int,
    change: Change,
    points: list[SeriesPoint],
    baseline_id: int | None,
    host_id: int,
    workload_id: int,
) -> tuple[Regression, bool]:
    kind = Regression.Kind.REGRESSION if change.change < 0 else Regression.Kind.IMPROVEMENT
    figures = {
        "kind": kind,
        "run_before_id": points[change.index - 1].run_id,
        "baseline_run_id": baseline_id,
        "before_tps": change.before,
        "after_tps": change.after,
        "before_runs": change.before_count,
        "after_runs": change.after_count,
        "change": change.change,
        "change_low": change.low,
        "change_high": change.high,
        "p_value": change.p_value,
        "redetected_at": timezone.now(),
    }
    moved = _moved(
        comparability_key=comparability_key,
        clients=clients,
        host_id=host_id,
        change=change,
        points=points,
        kind=kind,
    )
    if moved is not None:
        for name, value in figures.items():
            setattr(moved, name, value)
        moved.run_after_id = points[change.index].run_id
        fields = [*(n.removesuffix("_id") for n in figures), "run_after"]
        moved.save(update_fields=fields)
        return moved, False
    # The row lock makes two workers detecting the same series at once agree: the second waits
    # and updates what the first created (the unique constraint backs it).
    regression, created = Regression.objects.select_for_update().get_or_create(
        comparability_key=comparability_key,
        clients=clients,
        run_after_id=points[change.index].run_id,
        kind__in=STEP_KINDS,
        defaults={**figures, "host_id": host_id, "workload_id": workload_id},
    )
    if not created and regression.state == Regression.State.NEW:
        # More runs refine the figures of an untriaged change; a triaged one keeps what the
        # person saw when they decided.
        for name, value in figures.items():
            setattr(regression, name, value)
        regression.save(update_fields=[*(n.removesuffix("_id") for n in figures)])
    return regression, created


def _moved(
    *,
    comparability_key: str,
    clients: int,
    host_id: int,
    change: Change,
    points: list[SeriesPoint],
    kind: str,
) -> Regression | None:
    """The stored change this one is, found again at a neighbouring run: untriaged, of the same
    kind and series, its first run after within MOVE_RUNS of this one's, none stored at this
    one's run yet; locked. As runs arrive a change's place moves by a run or two, and storing
    each place as a change of its own made one step two or three alerts (docs/statistics.md,
    "Alerts as uploaded")."""
    place = {point.run_id: index for index, point in enumerate(points)}
    series = Regression.objects.select_for_update().filter(
        comparability_key=comparability_key, clients=clients, host_id=host_id
    )
    if series.filter(run_after_id=points[change.index].run_id, kind__in=STEP_KINDS).exists():
        return None
    near = [
        (abs(place[r.run_after_id] - change.index), r.pk, r)
        for r in series.filter(state=Regression.State.NEW, kind=kind).order_by("pk")
        if r.run_after_id in place and abs(place[r.run_after_id] - change.index) <= MOVE_RUNS
    ]
    return min(near)[2] if near else None


def series_withdraw_spanning(
    *, series: Series, comparability_key: str, clients: int, host_id: int
) -> list[Regression]:
    """Withdraw each stored change of this series (not withdrawn yet) whose run before and run
    after lie either side of one of its splits: what the runs hold equal changed between them,
    so the step is no change of PostgreSQL (detection under an older rule called it). Its state
    becomes `withdrawn` with the reason as its note and a RegressionEvent without an actor (the
    previous state stays in the log); nothing is deleted. Changes whose runs the series no
    longer holds (invalid, or older than its newest points) are left as they are. One
    transaction; returns those withdrawn now."""
    place = {point.run_id: index for index, point in enumerate(series.points)}
    withdrawn = []
    with transaction.atomic():
        stored = Regression.objects.select_for_update().filter(
            comparability_key=comparability_key, clients=clients, host_id=host_id
        )
        for regression in stored.exclude(state=Regression.State.WITHDRAWN).order_by("id"):
            before = place.get(regression.run_before_id)
            after = place.get(regression.run_after_id)
            if before is None or after is None:
                continue
            low, high = sorted((before, after))
            crossed = [split for split in series.splits if low < split.index <= high]
            if crossed:
                _withdraw(regression, reason=_spanning_reason(crossed))
                withdrawn.append(regression)
    return withdrawn


def _spanning_reason(splits: list[Split]) -> str:
    where = "; ".join(
        f"from {split.started_at:%Y-%m-%d %H:%M}: {'; '.join(split.reasons)}" for split in splits
    )
    text = (
        "Withdrawn by detection: the runs before and after this change lie either side of a "
        f"split of the series, where what they hold equal changed ({where}). No change is "
        "called across a split."
    )
    return text[:MAX_NOTE]


def _withdraw(regression: Regression, *, reason: str) -> None:
    RegressionEvent.objects.create(
        regression=regression,
        actor=None,
        from_state=regression.state,
        to_state=Regression.State.WITHDRAWN,
        note=reason,
    )
    regression.state, regression.note = Regression.State.WITHDRAWN, reason
    regression.state_changed_at, regression.state_changed_by = timezone.now(), None
    regression.save(update_fields=["state", "note", "state_changed_at", "state_changed_by"])
    if regression.group_id is not None:
        group_refresh(group_id=regression.group_id)


def run_detect(*, run_id: int) -> int:
    """Detect changes in every series a run belongs to (its comparability key at each of its
    client levels, on its host); returns how many changes were new. Reads the aggregates, so it
    runs after the run's aggregation (results.services.run_aggregate queues it)."""
    run = Run.objects.filter(pk=run_id).only("comparability_key", "host_id").first()
    if run is None:
        return 0
    levels = LevelAggregate.objects.filter(run_id=run_id).values_list("clients", flat=True)
    return sum(
        len(
            series_detect(
                comparability_key=run.comparability_key, clients=clients, host_id=run.host_id
            )
        )
        for clients in sorted(levels)
    )


def history_detect(*, notify: bool = False, limit: int = 100_000) -> tuple[int, int]:
    """Detect changes in every series stored (at most `limit`), e.g. once after installing
    detection over an existing history; returns (series read, changes new). Without `notify`,
    nobody is told about what was found (it is old news); the pages and API list it."""
    series = (
        LevelAggregate.objects.values_list("comparability_key", "clients", "host_id")
        .distinct()
        .order_by("comparability_key", "clients", "host_id")[:limit]
    )
    found = 0
    count = 0
    for key, clients, host_id in series.iterator():
        count += 1
        found += len(
            series_detect(comparability_key=key, clients=clients, host_id=host_id, notify=notify)
        )
    return count, found


def regressions_reexamine(*, limit: int = 100_000) -> tuple[int, int]:
    """Re-examine the stored changes of every series holding one (at most `limit` series) under
    the current rule, e.g. once after upgrading from a detector that did not split series:
    withdraw those that span a split (series_withdraw_spanning). Detects nothing new and tells
    nobody (`manage.py regressions_detect` detects). Returns (series read, changes withdrawn).
    Idempotent."""
    series = (
        Regression.objects.exclude(state=Regression.State.WITHDRAWN)
        .values_list("comparability_key", "clients", "host_id")
        .distinct()
        .order_by("comparability_key", "clients", "host_id")[:limit]
    )
    count = withdrawn = 0
    for key, clients, host_id in list(series):
        count += 1
        points = series_points(comparability_key=key, clients=clients, host_id=host_id)
        withdrawn += len(
            series_withdraw_spanning(
                series=points, comparability_key=key, clients=clients, host_id=host_id
            )
        )
    return count, withdrawn


def detect_enqueue(*, run_id: int) -> None:
    """Queue detection for a run. A broker outage is logged, not raised: the caller's write has
    committed, and the next upload of the series detects again."""
    from benchhub.regressions.tasks import detect_run

    try:
        detect_run.apply_async(args=(run_id,))
    except Exception:
        logger.warning("could not queue change detection of run %s", run_id, exc_info=True)


def notify_enqueue(*, regression_id: int) -> None:
    """Queue the notice of a confirmed change's alert after BENCHHUB_NOTICE_SETTLE_S: the other
    series of its commit range are detected after their own uploads, and those confirmed
    meanwhile go in the same notice. Every change queues one; the first to run tells them all,
    the others find nothing left to tell."""
    from benchhub.regressions.tasks import notify

    try:
        notify.apply_async(args=(regression_id,), countdown=settings.BENCHHUB_NOTICE_SETTLE_S)
    except Exception:
        logger.warning("could not queue notification of %s", regression_id, exc_info=True)


# Triage ------------------------------------------------------------------------------------


def regression_state_change(
    *, regression: Regression, state: str, note: str = "", actor: User
) -> Regression:
    """Move a regression to `state` with a note, recording who and when (a RegressionEvent).
    Only staff or holders of regressions.change_regression may; one transaction."""
    if not can_triage(actor):
        raise TriageForbidden(
            "forbidden", "Only staff or people allowed to triage change a regression's state."
        )
    if state not in Regression.State.values:
        choices = ", ".join(Regression.State.values)
        raise RegressionError("invalid", f"state must be one of {choices}.", field="state")
    note = note.strip()
    if len(note) > MAX_NOTE:
        raise RegressionError("invalid", f"A note is at most {MAX_NOTE} characters.", field="note")
    with transaction.atomic():
        locked = Regression.objects.select_for_update().get(pk=regression.pk)
        RegressionEvent.objects.create(
            regression=locked, actor=actor, from_state=locked.state, to_state=state, note=note
        )
        locked.state, locked.note = state, note
        locked.state_changed_at, locked.state_changed_by = timezone.now(), actor
        locked.save(update_fields=["state", "note", "state_changed_at", "state_changed_by"])
    for name in ("state", "note", "state_changed_at", "state_changed_by"):
        setattr(regression, name, getattr(locked, name))
    return regression


# Subscriptions and webhooks ----------------------------------------------------------------


def subscription_add(*, user: Any, host_name: str = "", workload_name: str = "") -> Subscription:
    """Subscribe a person to changes on a host, of a workload, both, or (both blank) all.
    Names must exist; subscribing twice returns the existing subscription."""
    host_name, workload_name = host_name.strip(), workload_name.strip()
    if host_name:
        # Stored as the host's own name: notifications match subscriptions on it.
        host = Host.objects.filter(name_key=host_name_key(host_name)).first()
        if host is None:
            raise RegressionError("invalid", f"No host named {host_name!r}.", field="host")
        host_name = host.name
    if workload_name and not Workload.objects.filter(name=workload_name).exists():
        raise RegressionError("invalid", f"No workload named {workload_name!r}.", field="workload")
    if Subscription.objects.filter(user=user).count() >= MAX_SUBSCRIPTIONS:
        raise RegressionError("invalid", f"At most {MAX_SUBSCRIPTIONS} subscriptions a person.")
    subscription, _ = Subscription.objects.get_or_create(
        user=user, host_name=host_name, workload_name=workload_name
    )
    return subscription


def subscription_remove(*, user: Any, subscription_id: int) -> bool:
    deleted, _ = Subscription.objects.filter(user=user, pk=subscription_id).delete()
    return bool(deleted)


def webhook_url_check(url: str) -> str:
    """A webhook URL the server may call: at most MAX_WEBHOOK_URL characters, read one way
    only (webhook_url.webhook_url_parse: http or https, a host, no credentials, nothing two
    parsers could read differently), and not naming an address the fetch policy refuses
    (a literal one or `localhost`) unless BENCHHUB_WEBHOOK_ALLOW_PRIVATE. Where a name points
    is checked again at each delivery, by the lookup the call uses."""
    url = url.strip()
    if not url:
        raise RegressionError("invalid", "A webhook needs a URL.", field="url")
    if len(url) > MAX_WEBHOOK_URL:
        raise RegressionError(
            "invalid", f"A webhook URL is at most {MAX_WEBHOOK_URL} characters.", field="url"
        )
    try:
        parsed = webhook_url_parse(url)
    except ValueError as exc:
        raise RegressionError("invalid", str(exc), field="url") from None
    refused = None if settings.BENCHHUB_WEBHOOK_ALLOW_PRIVATE else host_refusal(parsed.host)
    if refused:
        raise RegressionError(
            "invalid",
            f"{refused}, not a public address: the server calls public addresses only "
            f"({WEBHOOK_OPT_IN} allows private ones).",
            field="url",
        )
    return url


def webhook_add(*, user: Any, url: str) -> Webhook:
    """Add a webhook for a person, with a new random secret (shown to them on their page)."""
    url = webhook_url_check(url)
    if Webhook.objects.filter(user=user).count() >= MAX_WEBHOOKS:
        raise RegressionError("invalid", f"At most {MAX_WEBHOOKS} webhooks a person.", field="url")
    return Webhook.objects.create(user=user, url=url, secret=secrets.token_hex(32))


def webhook_remove(*, user: Any, webhook_id: int) -> bool:
    deleted, _ = Webhook.objects.filter(user=user, pk=webhook_id).delete()
    return bool(deleted)
