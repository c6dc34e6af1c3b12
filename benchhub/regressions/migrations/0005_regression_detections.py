# Changes stored before confirmation were notified when first found: they count as confirmed
# (3, regressions.detection.CONFIRM), so detecting them again does not send them a second time.

from django.db import migrations, models

HELP = "detections that found it; it is notified once CONFIRM did"


class Migration(migrations.Migration):
    dependencies = [
        ("regressions", "0004_alert_groups_and_drift"),
    ]

    operations = [
        migrations.AddField(
            model_name="regression",
            name="detections",
            field=models.PositiveIntegerField(default=3, help_text=HELP),
        ),
        migrations.AlterField(
            model_name="regression",
            name="detections",
            field=models.PositiveIntegerField(default=1, help_text=HELP),
        ),
    ]
