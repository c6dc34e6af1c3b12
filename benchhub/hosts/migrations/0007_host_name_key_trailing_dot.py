"""Host.name_key without the trailing dot (hosts.models.host_name_key): `bench-01.` and
`bench-01` are one machine's name.

Keys only, never names, rows or runs: a host whose key changes takes the new key when no other
host holds it; when one does (an import's `bench-01.` beside the agent's `bench-01`), the later
host keeps its rows and runs under `<key>#<id>`, as 0004 did for names alike in case, so the
index holds, nothing is merged behind anyone's back, and the two stay apart for staff to
resolve. New look-alikes are refused from now on.
"""

import unicodedata

from django.db import migrations


def _key(name: str) -> str:
    # hosts.models.host_name_key as of this migration.
    key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return key[:-1] if len(key) > 1 and key.endswith(".") else key


def rekey(apps, schema_editor):
    Host = apps.get_model("hosts", "Host")
    hosts = list(Host.objects.order_by("created_at", "pk").only("pk", "name", "name_key"))
    # A key 0004 suffixed (`<key>#<id>`) stays as it is when its key is still the host's.
    changing = [h for h in hosts if h.name_key not in (_key(h.name), f"{_key(h.name)}#{h.pk}")]
    taken = {h.name_key for h in hosts if h not in changing}
    # Out of the way first: a new key may be one that another changing host holds now.
    for host in changing:
        Host.objects.filter(pk=host.pk).update(name_key=f"#rekey#{host.pk}")
    for host in changing:
        key = _key(host.name)
        if key in taken:
            key = f"{key}#{host.pk}"
        taken.add(key)
        Host.objects.filter(pk=host.pk).update(name_key=key)


class Migration(migrations.Migration):
    dependencies = [("hosts", "0006_host_tablespaces")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
