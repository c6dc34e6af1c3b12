"""A history of runs with chosen medians, uploaded as an agent does and aggregated, and a
change between two of them stored as detection stores one."""

from typing import Any

import numpy as np
from django.utils import timezone

from benchhub.compare.tests.uploads import upload
from benchhub.regressions.grouping import group_file
from benchhub.regressions.models import Regression
from benchhub.results.models import Run


def noisy(level: float, n: int, *, seed: int, noise: float = 0.005) -> list[float]:
    """n values around `level` with a relative noise of `noise` (normal, seeded)."""
    rng = np.random.default_rng(seed)
    return [round(float(v), 3) for v in level * (1 + rng.normal(0, noise, n))]


def history(agent: Any, values: list[float], *, clients: int = 4) -> list[Run]:
    """One run per value, versions 14.1, 14.2, ... a day apart, one repeat each."""
    return [
        upload(
            agent,
            version=f"14.{i}",
            tps={clients: [value]},
            started_at=f"2026-10-{i:02d}T10:00:00Z",
        )
        for i, value in enumerate(values, start=1)
    ]


def regression_stored(
    before: Run, after: Run, *, before_runs: int, state: str = "new"
) -> Regression:
    """A 20% fall at 4 clients between these runs, stored as detection stores one, confirmed
    (due to be told) and filed in its alert group (its figures written here: the tests that
    call this check how it is found, triaged or withdrawn)."""
    regression = Regression.objects.create(
        kind="regression",
        state=state,
        comparability_key=after.comparability_key,
        clients=4,
        host=after.host,
        workload=after.workload,
        run_before=before,
        run_after=after,
        before_tps=1000.0,
        after_tps=800.0,
        before_runs=before_runs,
        after_runs=6,
        change=-0.2,
        change_low=-0.21,
        change_high=-0.19,
        p_value=1e-9,
        detections=3,
        confirmed_at=timezone.now(),
    )
    group_file(regression=regression)
    return regression
