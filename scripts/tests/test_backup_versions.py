"""scripts/backup.py reads PostgreSQL versions with the one grammar
(benchhub_runner.servers.versions), so it picks the dump tools of the server's own major, two-number
majors (9.6) included."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from benchhub.testing import installs

SCRIPTS = Path(__file__).resolve().parent.parent


@pytest.fixture
def backup(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return importlib.import_module("backup")


def test_it_reads_the_major_of_a_real_pg_dump(backup: ModuleType) -> None:
    assert backup.major(installs.client_bindir()) == "18"


@pytest.mark.parametrize(
    ("reported", "major"),
    [
        ("15.20 (Debian 15.20-1.pgdg120+1)\n", "15"),
        ("18beta1", "18"),
        ("9.6.24", "9.6"),
        ("17devel", "17"),
    ],
)
def test_it_reads_a_reported_version_as_its_major(
    backup: ModuleType, reported: str, major: str
) -> None:
    assert backup._major(reported, what="the database") == major


def test_it_orders_a_two_number_major_before_ten(backup: ModuleType) -> None:
    assert sorted(["10", "9.6", "18", "9.5"], key=backup._order) == ["9.5", "9.6", "10", "18"]


def test_it_names_what_reported_no_version(backup: ModuleType) -> None:
    with pytest.raises(backup.StackError, match="the database reports no PostgreSQL version"):
        backup._major("not a version", what="the database")
