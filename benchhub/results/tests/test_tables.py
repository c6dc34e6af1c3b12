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


# A post's results as published: one section per version, a header, a fenced block.
SECTIONS = """Test results, 32 cores, data in memory.

### 9.5

并发数 , TPS
```
16 , 123456
32 , 200,100
```

Now the new version:

### 9.6
```
并发数 , TPS
16 , 133456
64 , 250000
```
"""


def test_it_reads_a_page_of_sections_one_per_version_merged_on_clients():
    table = tables.table_read(SECTIONS)
    assert table.headers == ["clients", "9.5", "9.6"]
    assert table.rows == [["16", "123456", "133456"], ["32", "200,100", "-"], ["64", "-", "250000"]]
    assert table.lines == [7, 8, 17]
    # It makes its own choice, as the plain form does: nothing to pick.
    columns = tables.simple_columns(table)
    assert columns is not None
    assert tables.table_levels(table, columns) == {
        "9.5": [(16, 123456), (32, 200100)],
        "9.6": [(16, 133456), (64, 250000)],
    }


@pytest.mark.parametrize(
    "page",
    [
        "**PG 13.3**\n| clients | tps |\n|---|---|\n| 64 | 91,000 |\n\n**PG 14beta1**\n"
        "| clients | tps |\n|---|---|\n| 64 | 95500 |\n",
        "PostgreSQL 13.3:\nclients tps\n64 91000\nPostgreSQL 14beta1:\nclients tps\n64 95500\n",
        "> 13.3 结果\uff1a\n> 64\t91000\n> 14beta1 结果\uff1a\n> 64\t95500\n",
        "## 13.3\n~~~\n64, 91000\n~~~\n## 14beta1\n~~~\n64, 95500\n~~~\n",
    ],
    ids=["pipes-bold", "spaces-label", "tabs-quoted", "commas-tilde-fences"],
)
def test_it_reads_sections_in_every_rendering(page):
    table = tables.table_read(page)
    assert table.headers == ["clients", "13.3", "14beta1"]
    numbers = [[tables.number_read(cell) for cell in row] for row in table.rows]
    assert numbers == [[64, 91000, 95500]]


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("### 13\n64 , 1\n### 13\n64 , 2\n", "Line 3 names 13 a second time."),
        ("### 13\n64 , 1\n64 , 2\n", "Line 3 repeats clients 64 of 13."),
        ("### 13\n6.5 , 1\n", "Line 2: '6.5' is not a client count."),
    ],
)
def test_it_names_the_line_of_a_bad_section(page, message):
    with pytest.raises(tables.TableInvalid, match=message):
        tables.table_read(page)


def test_it_keeps_reading_a_two_column_table_headed_by_clients_as_a_table():
    table = tables.table_read("| clients | PG 13 tps |\n|---|---|\n| 52 | 1234 |\n")
    assert table.headers == ["clients", "PG 13 tps"]


MODELS = E5 + "TPC-B 1亿 -c 52 -j 52 -T 120 | 52 | 100000 | 120000 | 20%\n"


def test_it_offers_the_models_of_a_table_that_mixes_them_and_keeps_one():
    table = tables.table_read(MODELS)
    label = tables.label_column(table, 1)
    assert label == 0
    assert tables.column_values(table, label) == ["只读", "TPC-B"]
    read_only = tables.rows_with(table, label, "只读", field="filter")
    assert [row[1] for row in read_only.rows] == ["52", "104"]
    assert read_only.lines == [2, 3]
    assert [row[2] for row in tables.rows_with(table, label, "tpc-b", field="f").rows] == ["100000"]
    with pytest.raises(tables.TableInvalid, match="its values are 只读, TPC-B"):
        tables.rows_with(table, label, "只读写", field="filter")
    # A table giving each level once needs no choice.
    assert tables.label_column(tables.table_read(E5), 1) is None
