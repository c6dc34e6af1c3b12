"""Tests of :func:`parse_init_output` across the init formats of 9.2 to 18."""

from __future__ import annotations

import pytest

from benchhub_runner.parse import PgbenchParseError, parse_init_output


def test_it_reads_the_timings_of_a_real_pg15_init(read_fixture):
    out = parse_init_output(read_fixture("pg15-init-s1.txt"))

    assert out.rows == 100000 and out.rows_generated == 100000
    assert out.generate_side == "client"
    assert out.steps == ["drop tables", "create tables", "generate", "vacuum", "primary keys"]
    assert out.complete is True and out.errors == []
    timings = [out.drop_tables_s, out.create_tables_s, out.generate_s, out.vacuum_s]
    assert all(t is not None for t in timings) and out.primary_keys_s is not None
    assert out.foreign_keys_s is None
    # pgbench's total is the sum of the steps, not wall time (reference notes §8.1)
    assert out.total_s == pytest.approx(sum(timings) + out.primary_keys_s, abs=0.02)


def test_it_reads_the_table_named_tuples_line_of_18_and_server_side_generation(read_fixture):
    client = parse_init_output(read_fixture("pg18-init-s1.txt"))
    server = parse_init_output(read_fixture("pg18-init-serverside-fkeys.txt"))

    assert client.rows == 100000 and client.generate_elapsed_s == 0.01
    assert server.rows is None and server.generate_side == "server"
    assert server.foreign_keys_s is not None and server.steps[-1] == "foreign keys"


def test_it_reads_the_few_details_of_old_versions(read_fixture):
    v92 = parse_init_output(read_fixture("pg92-init-s2.txt"))
    v10 = parse_init_output(read_fixture("pg10-init.txt"))

    assert (v92.rows, v92.steps, v92.complete) == (
        200000,
        ["create tables", "primary keys", "vacuum"],
        True,
    )
    assert (v10.rows, v10.generate_elapsed_s, v10.total_s) == (200000, 0.09, None)
    assert v10.steps == ["create tables", "vacuum", "primary keys"]


def test_it_reads_partitions_and_the_padded_terminal_progress_of_newer_minors():
    text = (
        "dropping old tables...\ncreating tables...\ncreating 3 partitions...\n"
        "generating data (client-side)...\n"
        "100000 of 200000 tuples (50%) of pgbench_accounts done (elapsed 0.05 s, remaining "
        "0.05 s)\r200000 of 200000 tuples (100%) of pgbench_accounts done (elapsed 0.11 s, "
        "remaining 0.00 s)   \r\nvacuuming...\n"
    )
    out = parse_init_output(text)
    assert (out.partitions, out.rows, out.generate_elapsed_s, out.complete) == (
        3,
        200000,
        0.11,
        False,
    )


def test_it_lists_init_errors():
    text = (
        "dropping old tables...\ncreating tables...\n"
        "pgbench: error: query failed: ERROR:  permission denied for schema public\n"
    )
    assert parse_init_output(text).errors == [
        "pgbench: error: query failed: ERROR:  permission denied for schema public"
    ]


@pytest.mark.parametrize("text", ["", "done.\n", "vacuuming...\n", "transaction type: x\n"])
def test_it_rejects_text_that_is_not_init_output(text: str):
    with pytest.raises(PgbenchParseError, match="not pgbench -i output"):
        parse_init_output(text)
