"""Host names are unique whatever their spelling: letter case and compatibility forms."""

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from benchhub.hosts.models import Host, host_name_key
from benchhub.hosts.services import HostNameTaken, host_get_or_create, runner_token_create


def fullwidth(text: str) -> str:
    """ASCII text in its full-width compatibility forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(ch) + 0xFEE0) for ch in text)


def test_it_reads_names_that_differ_only_in_case_or_character_forms_as_one():
    assert (
        host_name_key("BENCH-A") == host_name_key("bench-a") == host_name_key(fullwidth("bench-a"))
    )
    assert host_name_key("Straße") == host_name_key("STRASSE")
    assert host_name_key("bench-a") != host_name_key("bench-b")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "spelling", ["BENCH-A", "Bench-A", fullwidth("bench-a"), fullwidth("BENCH") + "-a"]
)
def test_it_refuses_a_new_host_spelled_like_one_that_exists(spelling):
    runner_token_create(host_name="bench-a")

    with pytest.raises(HostNameTaken) as refused:
        host_get_or_create(name=spelling)

    assert refused.value.field == "host.name" and refused.value.status == 409
    assert "'bench-a'" in refused.value.detail
    assert list(Host.objects.values_list("name", flat=True)) == ["bench-a"]


@pytest.mark.django_db
def test_it_finds_a_host_under_its_own_name_and_keeps_distinct_names_apart():
    first = host_get_or_create(name="bench-a")
    assert host_get_or_create(name="bench-a") == first
    assert host_get_or_create(name="bench-b") != first


@pytest.mark.django_db
def test_the_database_holds_the_rule_whatever_writes_the_host():
    Host.objects.create(name="bench-a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Host.objects.create(name="BENCH-A")
    renamed = Host.objects.create(name="bench-b")
    renamed.name = "Bench-A"
    with pytest.raises(IntegrityError), transaction.atomic():
        renamed.save(update_fields=["name"])


@pytest.mark.django_db
def test_the_token_command_refuses_a_host_spelled_like_another_saying_which():
    runner_token_create(host_name="bench-a")
    with pytest.raises(CommandError, match="Host 'bench-a' already exists"):
        call_command("runner_create", "BENCH-A")
