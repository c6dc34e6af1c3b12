"""A history of runs with chosen medians, uploaded as an agent does and aggregated."""

from typing import Any

import numpy as np

from benchhub.compare.tests.uploads import upload
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
