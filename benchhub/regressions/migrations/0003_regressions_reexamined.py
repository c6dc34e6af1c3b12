"""Re-examine the changes stored before detection split a series where its runs stop being like
with like: queue the detection of each one's series (the Celery task `regressions.detect_run`,
by name, once this migration commits), which withdraws a change whose runs before and after lie
either side of a split. Without a broker, `manage.py regressions_reexamine` does the same in
the foreground; both are idempotent.
"""

import logging
from functools import partial

from django.db import migrations, transaction

logger = logging.getLogger(__name__)


def _queue(run_ids):
    from celery import current_app

    for run_id in run_ids:
        try:
            current_app.send_task("regressions.detect_run", args=(run_id,))
        except Exception:
            logger.warning(
                "could not queue the re-examination of stored changes; "
                "run `manage.py regressions_reexamine`",
                exc_info=True,
            )
            return


def queue_reexamination(apps, schema_editor):
    Regression = apps.get_model("regressions", "Regression")
    # One run of each series: detecting a run reads every series it belongs to.
    run_ids = sorted(
        set(Regression.objects.exclude(state="withdrawn").values_list("run_after_id", flat=True))
    )
    if run_ids:
        transaction.on_commit(partial(_queue, run_ids))


class Migration(migrations.Migration):
    dependencies = [("regressions", "0002_regression_withdrawn")]

    operations = [migrations.RunPython(queue_reexamination, migrations.RunPython.noop)]
