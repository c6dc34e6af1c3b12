# Each regression told before notices existed becomes a notice of its own (it was told alone),
# so the delivery log keeps what was sent and the change is never told again.

from django.db import migrations
from django.db.models import Min


def forwards(apps, schema_editor):
    Delivery = apps.get_model("regressions", "Delivery")
    Notice = apps.get_model("regressions", "Notice")
    Regression = apps.get_model("regressions", "Regression")
    told = (
        Delivery.objects.values("regression_id")
        .annotate(first=Min("created_at"))
        .order_by("regression_id")
    )
    for row in told.iterator():
        regression = Regression.objects.get(pk=row["regression_id"])
        notice = Notice.objects.create(group_id=regression.group_id, created_at=row["first"])
        Regression.objects.filter(pk=regression.pk).update(notice=notice)
        Delivery.objects.filter(regression_id=regression.pk).update(notice=notice)


class Migration(migrations.Migration):
    dependencies = [
        ("regressions", "0006_notices"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
