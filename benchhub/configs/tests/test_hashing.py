"""The configuration hash covers the settings an operator chose, and nothing about location."""

from benchhub.configs.hashing import config_hash, settings_diff
from benchhub.configs.services import config_get_or_create

BASE = {
    "shared_buffers": "16GB",
    "port": "55001",
    "data_directory": "/w/run-1/data",
    "jit": "on",
    "synchronous_commit": "off",
}
SOURCES = {
    "shared_buffers": "configuration file",
    "port": "command line",
    "data_directory": "override",
    "jit": "default",
    "synchronous_commit": "command line",
}


def test_it_ignores_location_and_defaults():
    other_run = {**BASE, "port": "55002", "data_directory": "/w/run-2/data", "jit": "off"}
    newer_version = {**BASE, "io_method": "worker"}
    assert config_hash(other_run, SOURCES) == config_hash(BASE, SOURCES)
    assert config_hash(newer_version, SOURCES) == config_hash(BASE, SOURCES)


def test_it_ignores_what_a_server_derives_from_its_environment():
    # PostgreSQL 13 reports max_stack_depth from the stack rlimit as an "environment variable"
    # setting; 15 reports it as a default. Both ran the same configuration.
    pg13 = {**SOURCES, "max_stack_depth": "environment variable"}
    assert config_hash({**BASE, "max_stack_depth": "2MB"}, pg13) == config_hash(BASE, SOURCES)


def test_it_changes_with_a_chosen_setting():
    assert config_hash({**BASE, "shared_buffers": "8GB"}, SOURCES) != config_hash(BASE, SOURCES)


def test_it_counts_every_given_setting_without_sources():
    assert config_hash({"jit": "off"}, None) != config_hash({"jit": "on"}, None)


def test_it_stores_each_configuration_once(db):
    a = config_get_or_create(settings=BASE, sources=SOURCES)
    b = config_get_or_create(settings={**BASE, "port": "1"}, sources=SOURCES)
    assert a.pk == b.pk
    assert a.settings == {"shared_buffers": "16GB", "synchronous_commit": "off"}


def test_it_diffs_two_configurations():
    a = {"shared_buffers": "16GB", "wal_level": "minimal"}
    b = {"shared_buffers": "8GB", "huge_pages": "on", "wal_level": "minimal"}
    assert settings_diff(a, b) == [("huge_pages", None, "on"), ("shared_buffers", "16GB", "8GB")]
