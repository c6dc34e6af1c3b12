"""The bench's history generator writes the shape uploads and imports write: a series of arrays,
an OS telemetry row and an output row per result that carries detail, a text per imported run,
each in the partition of its run's month, so that retention drops them as it drops a real
repository's."""

from datetime import UTC, datetime

from django.db import connection
from django.utils import timezone

from bench.history import MARKER, PROGRESS_SAMPLES, history_ensure
from benchhub.results.models import (
    ProgressSeries,
    ResultOutput,
    ResultTelemetry,
    Run,
    RunImportText,
)
from benchhub.results.partitions import DETAIL_TABLES, month_start, retention_apply


def count(sql: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def test_it_writes_the_detail_in_the_monthly_partitions_retention_drops(transactional_db):
    with connection.cursor() as cursor:  # a marker left by another database's history
        cursor.execute(f"DROP TABLE IF EXISTS {MARKER}")
    try:
        shape = history_ensure(results=27 * 60, hosts=2, workloads=2)
        detailed = shape.progress_samples // PROGRESS_SAMPLES
        assert (shape.runs, detailed) == (60, 32)
        assert ProgressSeries.objects.count() == ResultOutput.objects.count() == detailed
        assert ResultTelemetry.objects.count() == detailed
        assert {len(s.t) for s in ProgressSeries.objects.all()} == {PROGRESS_SAMPLES}
        telemetry = ResultTelemetry.objects.first()
        seconds = [float(t) for t in range(1, PROGRESS_SAMPLES + 1)]
        assert [s["t"] for s in telemetry.samples] == seconds
        assert set(telemetry.samples[0]) >= {"cpu_iowait_pct", "disk_util_pct", "client_cpu_pct"}
        imported = Run.objects.filter(source="import")
        assert 0 < imported.count() < shape.runs
        assert set(RunImportText.objects.values_list("run", flat=True)) == set(
            imported.values_list("pk", flat=True)
        )
        assert "clients: tps = " in RunImportText.objects.first().text
        for table in DETAIL_TABLES:  # every row in its month's partition, none in the default
            assert count(f"SELECT count(*) FROM {table}_default") == 0, table  # noqa: S608

        retention_apply(keep_months=0)

        month = month_start(timezone.now())
        this_month = datetime(month.year, month.month, 1, tzinfo=UTC)
        assert not RunImportText.objects.filter(created_at__lt=this_month).exists()
        assert not ProgressSeries.objects.filter(created_at__lt=this_month).exists()
        assert not ResultTelemetry.objects.filter(created_at__lt=this_month).exists()
        assert Run.objects.count() == shape.runs  # the runs and their figures stay
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {MARKER}")
