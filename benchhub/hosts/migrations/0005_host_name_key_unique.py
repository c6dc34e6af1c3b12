from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("hosts", "0004_host_name_key")]

    operations = [
        migrations.AlterField(
            model_name="host",
            name="name_key",
            field=models.CharField(editable=False, max_length=800, unique=True),
        ),
    ]
