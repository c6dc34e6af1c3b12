# A notice (one message per alert group, or per drift) becomes what is delivered; a delivery
# told of one regression before. Added nullable here, filled from the deliveries in 0007, and
# the deliveries' regression column dropped in 0008.

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("regressions", "0005_regression_detections"),
    ]

    operations = [
        migrations.CreateModel(
            name="Notice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("update", models.BooleanField(default=False, help_text="names only changes filed after the group's earlier notices")),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("group", models.ForeignKey(blank=True, help_text="the alert group it tells of; null for a drift", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="notices", to="regressions.alertgroup")),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.AddField(
            model_name="regression",
            name="confirmed_at",
            field=models.DateTimeField(blank=True, help_text="when it became due to be told", null=True),
        ),
        migrations.AddField(
            model_name="regression",
            name="notice",
            field=models.ForeignKey(blank=True, help_text="the notice that told it: it is told once", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="members", to="regressions.notice"),
        ),
        migrations.AddField(
            model_name="delivery",
            name="notice",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="deliveries", to="regressions.notice"),
        ),
    ]
