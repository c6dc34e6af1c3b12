"""The migration that drops the trailing dot from host name keys: it re-keys, never merges."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from benchhub.hosts.models import Host

BEFORE = [("hosts", "0006_host_tablespaces")]
AFTER = [("hosts", "0007_host_name_key_trailing_dot")]


@pytest.mark.django_db(transaction=True)
def test_it_rekeys_names_with_a_trailing_dot_and_keeps_look_alikes_apart():
    executor = MigrationExecutor(connection)
    try:
        rekeyed(executor)
    finally:
        # Going back to BEFORE unapplied every migration that depends on it, other apps' too;
        # later tests on this database need all of them back.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def rekeyed(executor: MigrationExecutor) -> None:
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("hosts", "Host")
    agent = old.objects.create(name="bench-01", name_key="bench-01")
    imported = old.objects.create(name="bench-01.", name_key="bench-01.")
    alone = old.objects.create(name="Lab-02.", name_key="lab-02.")
    cased = old.objects.create(name="BENCH-01", name_key="placeholder")
    old.objects.filter(pk=cased.pk).update(name_key=f"bench-01#{cased.pk}")  # as 0004 left it

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    keys = dict(Host.objects.values_list("pk", "name_key"))
    assert keys == {
        agent.pk: "bench-01",
        imported.pk: f"bench-01#{imported.pk}",  # taken by the older host: kept apart
        alone.pk: "lab-02",
        cased.pk: f"bench-01#{cased.pk}",
    }
    assert Host.objects.count() == 4
