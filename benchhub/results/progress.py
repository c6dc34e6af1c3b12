"""Progress series: a result's `-P` lines as one row of arrays (results.models.ProgressSeries),
and the conversion of the rows of the former shape, a row per line, into it.

The conversion moves whole results, a batch per transaction: each batch inserts the results'
series and deletes their old rows in one commit, so an interrupted conversion leaves every
result either converted or untouched, and running it again picks up where it stopped. No
statement holds a lock on either table for longer than one batch.
"""

from django.db import connection, transaction

CONVERT_BATCH = 500

_PICK_SQL = """
SELECT DISTINCT result_id FROM results_progresssample ORDER BY result_id LIMIT %s
"""

# ON CONFLICT: a result whose series exists already (written by an upload after its old rows
# were left behind, or by a batch whose delete did not follow) keeps that series.
_CONVERT_SQL = """
INSERT INTO results_progressseries
    (result_id, created_at, t, tps, latency_ms, stddev_ms, failed, skipped, lag_ms)
SELECT p.result_id, run.created_at,
       array_agg(p.t ORDER BY p.t), array_agg(p.tps ORDER BY p.t),
       array_agg(p.latency_ms ORDER BY p.t), array_agg(p.stddev_ms ORDER BY p.t),
       array_agg(p.failed ORDER BY p.t), array_agg(p.skipped ORDER BY p.t),
       array_agg(p.lag_ms ORDER BY p.t)
FROM results_progresssample p
JOIN results_result r ON r.id = p.result_id
JOIN results_run run ON run.id = r.run_id
WHERE p.result_id = ANY(%s)
GROUP BY p.result_id, run.created_at
ON CONFLICT (result_id, created_at) DO NOTHING
"""


def progress_convert_batch(*, limit: int = CONVERT_BATCH) -> int:
    """Convert the old progress rows of up to `limit` results in one transaction; returns how
    many results were converted (0: nothing is left)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_PICK_SQL, [limit])
        ids = [result_id for (result_id,) in cursor.fetchall()]
        if ids:
            cursor.execute(_CONVERT_SQL, [ids])
            cursor.execute("DELETE FROM results_progresssample WHERE result_id = ANY(%s)", [ids])
    return len(ids)


def progress_convert(*, batch: int = CONVERT_BATCH, max_batches: int | None = None) -> int:
    """Convert batches until none is left (or `max_batches` have run); returns how many
    results were converted. Must run outside a transaction for its batches to commit one by
    one. Idempotent."""
    total, batches = 0, 0
    while max_batches is None or batches < max_batches:
        done = progress_convert_batch(limit=batch)
        if not done:
            break
        total, batches = total + done, batches + 1
    return total
