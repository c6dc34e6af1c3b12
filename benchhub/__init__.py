"""BenchHub: a result repository and dashboard for pgbench benchmarks."""

from benchhub.celery import app as celery_app

__all__ = ["celery_app"]
