"""Published tables read as published: cells, numbers, columns (pure code, no database)."""

import pytest

from benchhub.results import tables

E5 = (
    "模型 | 连接数 | PG 13 tps | PG 14 tps | 14性能提升比率\n"
    "只读 1亿 -c 52 -j 52 -T 120 | 52 | 1234936 | 1582846 | 28.2%\n"
    "只读 1亿 -c 104 -j 104 -T 120 | 104 | 1,330,012 | 1,701,233 | 27.9%\n"
)


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("1582846", 1582846),
        ("1,582,846", 1582846),
        ("1 582 846", 1582846),
        ("1\u202f582\u202f846", 1582846),
        ("1'582'846", 1582846),
        ("1.582.846", 1582846),
        ("91000 tps", 91000),
        ("12,5", 12.5),
        ("88.5k", 88500),
        ("~ 1200", 1200),
        ("1234 (+3.1%)", 1234),
        ("-", None),
        ("\u2014", None),
        ("n/a", None),
    ],
)
def test_it_reads_a_published_number(cell, value):
    assert tables.number_read(cell) == value


@pytest.mark.parametrize("cell", ["只读 1亿 -c 52", "fast", "PG 13"])
def test_it_refuses_a_label_as_a_number(cell):
    with pytest.raises(ValueError):
        tables.number_read(cell)


def test_it_reads_a_pipe_table_with_a_label_and_a_ratio_column():
    table = tables.table_read(E5)
    assert table.headers == ["模型", "连接数", "PG 13 tps", "PG 14 tps", "14性能提升比率"]
    assert table.lines == [2, 3] and not table.plain
    assert tables.simple_columns(table) is None
    assert tables.columns_guess(table) == (1, [(2, "13"), (3, "14")])
    levels = tables.table_levels(table, tables.Columns(clients=1, versions=[(2, "13"), (3, "14")]))
    assert levels == {
        "13": [(52, 1234936), (104, 1330012)],
        "14": [(52, 1582846), (104, 1701233)],
    }


def test_it_reads_a_markdown_table_with_its_separator_row_and_outer_pipes():
    table = tables.table_read("| clients | 13 | 14 |\n|:---|---:|---:|\n| 8 | 100 | 110 |\n")
    assert (table.headers, table.rows) == (["clients", "13", "14"], [["8", "100", "110"]])
    assert tables.simple_columns(table) == tables.Columns(
        clients=0, versions=[(1, "13"), (2, "14")]
    )


def test_it_names_a_row_of_the_wrong_width():
    with pytest.raises(tables.TableInvalid, match="Line 4 has 2 columns; the header has 5"):
        tables.table_read(E5 + "x | 1\n")


def test_it_finds_a_column_by_index_or_header_and_names_a_missing_one():
    table = tables.table_read(E5)
    assert tables.column_index(table, "pg 14 TPS", field="c") == 3
    assert tables.column_index(table, 1, field="c") == 1
    with pytest.raises(tables.TableInvalid) as refused:
        tables.column_index(table, "PG 15 tps", field="columns[0].column")
    assert refused.value.field == "columns[0].column"


@pytest.mark.parametrize(
    ("header", "version"),
    [("PG 13 tps", "13"), ("14beta1", "14beta1"), ("v9.5.4 (tps)", "9.5.4"), ("ratio %", "")],
)
def test_it_reads_the_version_a_header_names(header, version):
    assert tables.version_of_header(header) == version
