"""What an upload's run points at, read in one query (results.references)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchhub.builds.models import Build
from benchhub.configs.models import ServerConfig
from benchhub.hosts.models import HostFacts
from benchhub.results.references import run_references
from benchhub.results.serializers import RunUploadSerializer
from benchhub.results.services import run_submit
from benchhub.testing.payloads import run_payload
from benchhub.workloads.models import Workload


def validated(**overrides):
    upload = RunUploadSerializer(data=run_payload(**overrides))
    upload.is_valid(raise_exception=True)
    return upload.validated_data


def test_it_reads_what_a_stored_run_points_at_in_one_query(db):
    first = run_submit(data=validated(), digest="a" * 64).run
    data = validated()
    with CaptureQueriesContext(connection) as queries:
        found = run_references(data=data, host=first.host)
    assert len(queries) == 1
    assert (found.build.pk, found.config.pk, found.workload.pk, found.facts.pk) == (
        first.build_id,
        first.config_id,
        first.workload_id,
        first.host_facts_id,
    )
    assert (found.config.hash, found.workload.name, found.facts.fingerprint) == (
        first.config.hash,
        first.workload.name,
        first.host_facts.fingerprint,
    )
    # The build is read whole; the others' remaining fields load when asked for.
    stored = Build.objects.get(pk=first.build_id)
    assert [getattr(found.build, f.attname) for f in Build._meta.concrete_fields] == [
        getattr(stored, f.attname) for f in Build._meta.concrete_fields
    ]
    assert found.config.settings == first.config.settings


def test_it_creates_what_is_new_and_leaves_new_facts_to_the_host(db):
    first = run_submit(data=validated(), digest="a" * 64).run
    data = validated(version="17.2")
    data["host"]["facts"] = {**data["host"]["facts"], "cores": 64}
    data["configuration"]["settings"] = {**data["configuration"]["settings"], "work_mem": "1GB"}
    data["configuration"]["sources"] = {
        **data["configuration"]["sources"],
        "work_mem": "configuration file",
    }
    found = run_references(data=data, host=first.host)
    assert found.build.version == "17.2" and found.build.pk != first.build_id
    assert found.config.pk != first.config_id
    assert found.workload.pk == first.workload_id
    assert found.facts is None
    assert (Build.objects.count(), ServerConfig.objects.count(), Workload.objects.count()) == (
        2,
        2,
        1,
    )
    assert HostFacts.objects.count() == 1
