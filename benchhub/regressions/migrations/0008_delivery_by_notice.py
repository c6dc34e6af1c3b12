import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("regressions", "0007_notices_from_deliveries"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="delivery", name="delivery_one_email"),
        migrations.RemoveConstraint(model_name="delivery", name="delivery_one_webhook"),
        migrations.RemoveField(model_name="delivery", name="regression"),
        migrations.AlterField(
            model_name="delivery",
            name="notice",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="deliveries", to="regressions.notice"),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.UniqueConstraint(condition=models.Q(("channel", "email")), fields=("notice", "user"), name="delivery_notice_one_email"),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.UniqueConstraint(condition=models.Q(("channel", "webhook")), fields=("notice", "webhook"), name="delivery_notice_one_webhook"),
        ),
    ]
