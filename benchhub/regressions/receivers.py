"""Change detection runs over a run's series once the results app announces the run was
aggregated (results.hooks.run_aggregated): detection reads the level aggregates. Connected in
RegressionsConfig.ready()."""

from typing import Any

from django.dispatch import receiver

from benchhub.regressions.services import detect_enqueue
from benchhub.results.hooks import run_aggregated


@receiver(run_aggregated, dispatch_uid="regressions.run_aggregated")
def on_run_aggregated(*, run_id: int, **_: Any) -> None:
    detect_enqueue(run_id=run_id)
