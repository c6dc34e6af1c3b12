"""Host.name_key: each host name's spelling-blind form (hosts.models.host_name_key), unique.

Hosts already named alike in another case (an import's `BENCH-A` beside the agent's `bench-a`)
keep their rows and runs: the oldest takes the key, each later one `<key>#<id>`, so the index
holds and nothing is lost; new look-alikes are refused from now on.
"""

import unicodedata

from django.db import migrations, models


def _key(name: str) -> str:
    # hosts.models.host_name_key as of this migration.
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def fill_keys(apps, schema_editor):
    Host = apps.get_model("hosts", "Host")
    taken: set[str] = set()
    for host in Host.objects.order_by("created_at", "pk").only("pk", "name"):
        key = _key(host.name)
        if key in taken:
            key = f"{key}#{host.pk}"
        taken.add(key)
        Host.objects.filter(pk=host.pk).update(name_key=key)


class Migration(migrations.Migration):
    dependencies = [("hosts", "0003_merge_20261123_0810")]

    operations = [
        migrations.AddField(
            model_name="host",
            name="name_key",
            field=models.CharField(editable=False, max_length=800, null=True),
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
    ]
