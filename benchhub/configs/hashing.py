"""What part of a server's settings identifies its configuration, and how two compare.

An agent records the whole of `SHOW ALL` (with each setting's source from pg_settings), but two
runs of different versions never have the same `SHOW ALL`: each major adds and retires settings,
and every fresh cluster has its own port and data directory. The configuration hash therefore
covers what an operator chose: settings whose source is a configuration file, the command line, or
an ALTER SYSTEM/DATABASE/ROLE, less the ones that only say where a cluster lives. The source
"environment variable" is not a choice: servers up to 13 report max_stack_depth, derived from the
stack rlimit, with that source, and PGDATA/PGPORT only say where a cluster lives.
When sources are not known (an imported postgresql.conf), every given setting counts as chosen.
"""

from benchhub.digests import canonical_digest

CHOSEN_SOURCES = frozenset(
    {
        "configuration file",
        "command line",
        "global",
        "database",
        "user",
        "database user",
    }
)

# Where a cluster lives and what it is called: different for every run, irrelevant to speed.
LOCATION_SETTINGS = frozenset(
    {
        "application_name",
        "cluster_name",
        "config_file",
        "data_directory",
        "external_pid_file",
        "hba_file",
        "ident_file",
        "listen_addresses",
        "log_directory",
        "log_filename",
        "port",
        "server_version",
        "server_version_num",
        "unix_socket_directories",
        "unix_socket_group",
        "unix_socket_permissions",
        "krb_server_keyfile",
        "ssl_ca_file",
        "ssl_cert_file",
        "ssl_crl_dir",
        "ssl_crl_file",
        "ssl_key_file",
        "ssl_dh_params_file",
        "event_source",
        "syslog_ident",
        "stats_temp_directory",
        "log_destination",
        "logging_collector",
    }
)


def chosen_settings(settings: dict[str, str], sources: dict[str, str] | None) -> dict[str, str]:
    """The settings that make up the configuration's identity (see the module docstring)."""
    return {
        name: value
        for name, value in settings.items()
        if name not in LOCATION_SETTINGS
        and (not sources or sources.get(name, "default") in CHOSEN_SOURCES)
    }


def config_hash(settings: dict[str, str], sources: dict[str, str] | None) -> str:
    chosen = chosen_settings(settings, sources)
    return canonical_digest(chosen)


def settings_diff(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str | None, str | None]]:
    """(name, value in a, value in b) for every setting that differs, None where it is absent."""
    names = sorted(set(a) | set(b))
    return [(n, a.get(n), b.get(n)) for n in names if a.get(n) != b.get(n)]
