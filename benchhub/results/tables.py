"""Published tables of numbers, read as they are published (pure code, no database).

A table from a paper, a blog post or a wiki has more than clients and one tps per version: a
label column ("read-only, 100M rows"), a ratio column ("+28.2%"), units ("tps"), thousands
separators ("1,582,846"), headers in any language ("连接数"). :func:`table_read` splits it into
cells (pipes of a Markdown table, tabs of a spreadsheet, else blanks and commas as in the plain
`clients 13.3 14beta1` form), and :func:`table_levels` turns the columns a person chose into
clients -> tps per version. :func:`columns_guess` proposes a choice, for a page to prefill.

A page may instead give one section per version, as posts do: a heading or a label naming the
version (`### 9.5`, `**PG 14beta1**`, `PostgreSQL 13.3:`), maybe a header line of two columns
(`并发数 , TPS`, `clients tps`, `| clients | tps |`), then lines of clients and tps, in or out
of code fences, with prose between sections. :func:`sections_table` reads them as one table.
A table that mixes models or workloads in a label column is imported one value of that column at
a time: :func:`label_column` finds the column, :func:`rows_with` keeps the rows of one value.
"""

import re
from dataclasses import dataclass

from benchhub.errors import ApplicationError

_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
_FENCE = re.compile(r"^(?:`{3,}|~{3,})[\w+.-]*$")
_NUMBER = re.compile(r"[-+]?\d[\d,.'_\s\u00a0\u202f\u2009]*")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_EMPTY = {"", "-", "\u2013", "\u2014", "n/a", "na", "none", "null", "?"}  # dashes
_VERSION = re.compile(
    r"(?<![\d.])(\d{1,2}(?:\.\d{1,2}){0,2}(?:(?:alpha|beta|rc)\d+|devel)?)(?![\d.%])"
)
_CLIENTS_HEADER = re.compile(
    r"client|conn|session|user|thread|并发|连接|客户端|接続|-c\b|^c$", re.IGNORECASE
)


class TableInvalid(ApplicationError):
    """The table, or the columns chosen in it, do not give clients and tps."""

    def __init__(self, detail: str, field: str = "table") -> None:
        super().__init__("invalid", detail, field=field)


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[str]]  # the cells of each row under the header, as text
    lines: list[int]  # the line number of each row in the pasted text (1-based)
    plain: bool = False  # cells separated by blanks and commas: `clients 13.3 14beta1`


@dataclass(frozen=True)
class Columns:
    """A choice: the clients column and (column, version) of each version, by index from 0."""

    clients: int
    versions: list[tuple[int, str]]


def _cells(line: str, separator: str) -> list[str]:
    if separator == "|":
        cells = [cell.strip() for cell in line.strip().split("|")]
        if line.strip().startswith("|"):
            cells = cells[1:]
        if line.strip().endswith("|") and cells:
            cells = cells[:-1]
        return cells
    if separator == "\t":
        return [cell.strip() for cell in line.split("\t")]
    return [cell for cell in re.split(r"[\s,;]+", line.strip()) if cell]


def table_read(text: str) -> Table:
    """The header and rows of a pasted table; TableInvalid names a row of the wrong width.

    A page of sections, one per version (:func:`sections_table`), reads as the table
    `clients <version> ...` they make together.
    """
    sectioned = sections_table(text)
    if sectioned is not None:
        return sectioned
    numbered = [
        (number, line.strip().removeprefix(">").strip())
        for number, line in enumerate(text.splitlines(), 1)
    ]
    numbered = [(n, line) for n, line in numbered if line and not _FENCE.match(line)]
    separator = next((s for s in ("|", "\t") if any(s in line for _, line in numbered)), " ")
    rows = [(n, _cells(line, separator)) for n, line in numbered]
    rows = [(n, cells) for n, cells in rows if not all(_SEPARATOR_CELL.match(c) for c in cells)]
    if len(rows) < 2 or len(rows[0][1]) < 2:
        raise TableInvalid(
            "Give a header line (clients and one column per version) and at least one row."
        )
    (_, headers), body = rows[0], rows[1:]
    for number, cells in body:
        if len(cells) != len(headers):
            raise TableInvalid(
                f"Line {number} has {len(cells)} columns; the header has {len(headers)}."
            )
    return Table(
        headers=headers,
        rows=[c for _, c in body],
        lines=[n for n, _ in body],
        plain=separator == " ",
    )


def number_read(cell: str) -> float | None:
    """A published number: units, percent signs and thousands separators (`1,582,846`,
    `1 582 846`, `1'582'846`, `1.582.846`) aside; None for an empty cell (`-`, `n/a`).
    ValueError when the cell is not a number."""
    if cell.strip().lower() in _EMPTY:
        return None
    match = _NUMBER.search(cell)
    # A label that holds a number ("read-only 1亿 -c 52") is not a number: only a sign may stand
    # before it, and after it a unit, maybe with a remark in parentheses ("1234 tps (+3%)").
    after = re.sub(r"\([^)]*\)", "", cell[match.end() :]) if match else ""
    if match is None or cell[: match.start()].strip(" ~≈") or re.search(r"\d", after):
        raise ValueError(cell)
    token = re.sub(r"['_\s\u00a0\u202f\u2009]", "", match.group(0)).rstrip(".,")
    if token.count(".") > 1:
        token = token.replace(".", "")
    if _THOUSANDS.match(token) or token.count(",") > 1:
        token = token.replace(",", "")
    elif "," in token and "." not in token:
        token = token.replace(",", ".")  # a decimal comma
    thousand = cell[match.end() :].strip()[:1] in ("k", "K")  # 91.5k
    return float(token) * (1000 if thousand else 1)


def column_index(table: Table, reference: int | str, *, field: str) -> int:
    """A column named by its index (0 is the first) or by its header text."""
    if isinstance(reference, int) or reference.strip().isdigit():
        index = int(reference)
        if 0 <= index < len(table.headers):
            return index
        raise TableInvalid(
            f"There is no column {index}: the table has {len(table.headers)}.", field
        )
    wanted = reference.strip().casefold()
    for index, header in enumerate(table.headers):
        if header.strip().casefold() == wanted:
            return index
    raise TableInvalid(
        f"No column is headed {reference!r}; the headers are {', '.join(table.headers)}.", field
    )


def version_of_header(header: str) -> str:
    """The PostgreSQL version a column header names (`PG 13 tps` -> 13), or ''."""
    match = _VERSION.search(header)
    return match.group(1) if match else ""


def _numeric(table: Table, index: int) -> bool:
    try:
        values = [number_read(row[index]) for row in table.rows]
    except ValueError:
        return False
    return any(v is not None for v in values) and not any("%" in r[index] for r in table.rows)


def _integers(table: Table, index: int) -> bool:
    try:
        values = [number_read(row[index]) for row in table.rows]
    except ValueError:
        return False
    return all(v is not None and v == int(v) and v > 0 for v in values)


def columns_guess(table: Table) -> tuple[int | None, list[tuple[int, str]]]:
    """A proposed clients column and (column, version) pairs: the first integer column whose
    header speaks of clients or connections (else the first integer column), and every other
    numeric column, without percentages, whose header names a version."""
    integer_columns = [i for i in range(len(table.headers)) if _integers(table, i)]
    named = [i for i in integer_columns if _CLIENTS_HEADER.search(table.headers[i])]
    candidates = named or integer_columns
    clients = candidates[0] if candidates else None
    versions = [
        (index, version_of_header(header))
        for index, header in enumerate(table.headers)
        if index != clients and version_of_header(header) and _numeric(table, index)
    ]
    return clients, versions


def simple_columns(table: Table) -> Columns | None:
    """The choice a table makes itself: the plain form `clients <version> <version> ...`, or a
    pipe or tab table of a clients column and one column per version named by its header."""
    if not table.plain and not (
        _integers(table, 0)
        and all(version_of_header(h) == h.strip() for h in table.headers[1:])
        and all(_numeric(table, i) for i in range(1, len(table.headers)))
    ):
        return None
    return Columns(clients=0, versions=[(i, h) for i, h in enumerate(table.headers) if i])


def table_levels(table: Table, columns: Columns) -> dict[str, list[tuple[int, float]]]:
    """version -> [(clients, tps)] of the chosen columns, in the table's order; TableInvalid
    names the line of a cell that is not a number and a client level given twice."""
    levels: dict[str, list[tuple[int, float]]] = {version: [] for _, version in columns.versions}
    seen: dict[int, int] = {}
    for line, row in zip(table.lines, table.rows, strict=True):
        clients = _cell(row, columns.clients, line, table)
        if clients is None or clients != int(clients) or clients < 1:
            raise TableInvalid(f"Line {line}: {row[columns.clients]!r} is not a client count.")
        if int(clients) in seen:
            raise TableInvalid(
                f"Line {line} repeats clients {int(clients)} of line {seen[int(clients)]}: "
                "import one workload at a time (leave the other rows out)."
            )
        seen[int(clients)] = line
        for index, version in columns.versions:
            tps = _cell(row, index, line, table)
            if tps is not None:
                levels[version].append((int(clients), tps))
    return levels


def _cell(row: list[str], index: int, line: int, table: Table) -> float | None:
    try:
        return number_read(row[index])
    except ValueError:
        raise TableInvalid(
            f"Line {line} is not numbers: {row[index]!r} under {table.headers[index]!r}."
        ) from None


_HEADING_MARKS = re.compile(r"^(?:#{1,6}\s*|[*_]{1,3}|\[|【)+|(?:[*_]{1,3}|\]|】|[:\uff1a])+$")
# ASCII and full-width commas and semicolons.
_PAIR_COMMA = re.compile(r"\s*[,;\uff0c\uff1b]\s+|\s+[,;\uff0c\uff1b]\s*")


def _pair(line: str) -> list[str] | None:
    """The two cells of a line of a two-column block, or None when it has not two."""
    if "|" in line or "\t" in line:
        cells = _cells(line, "|" if "|" in line else "\t")
        return cells if len(cells) == 2 else None
    for cells in (_PAIR_COMMA.split(line.strip()), line.split(), line.split(",")):
        if len(cells) == 2 and all(c.strip() for c in cells):
            return [c.strip() for c in cells]
    return None


def _is_number(cell: str) -> bool:
    try:
        return number_read(cell) is not None
    except ValueError:
        return False


def _heading_version(line: str) -> str:
    """The one version a heading or label names (`### 9.5`, `PG 13 结果:`), or ''."""
    text = _HEADING_MARKS.sub("", line.strip()).strip()
    found = _VERSION.findall(text)
    cells = _pair(line)
    # `clients | PG 13` heads a column of a table, not a section.
    if cells is not None and _CLIENTS_HEADER.search(cells[0]):
        return ""
    return found[0] if len(found) == 1 else ""


def _pair_of_numbers(line: str) -> bool:
    cells = _pair(line)
    return cells is not None and all(_is_number(c) for c in cells)


def sections_table(text: str) -> Table | None:
    """The table of a page of sections, one per version: `clients <version> ...`, merged on
    clients (a level a version lacks is '-'); None when the text is not such a page (a line of
    two numbers outside a section, or no section). TableInvalid names a version given twice and
    a level given twice in one section."""
    lines = [
        (n, line.strip().removeprefix(">").strip()) for n, line in enumerate(text.splitlines(), 1)
    ]
    lines = [(n, line) for n, line in lines if line and not _FENCE.match(line)]
    tps: dict[str, dict[int, str]] = {}
    first_line: dict[int, int] = {}
    version = ""
    for n, line in lines:
        if _pair_of_numbers(line):
            if not version:
                return None
            clients_cell, tps_cell = _pair(line) or ["", ""]
            clients = number_read(clients_cell) or 0
            if clients != int(clients) or clients < 1:
                raise TableInvalid(f"Line {n}: {clients_cell!r} is not a client count.")
            if int(clients) in tps[version]:
                raise TableInvalid(f"Line {n} repeats clients {int(clients)} of {version}.")
            tps[version][int(clients)] = tps_cell
            first_line.setdefault(int(clients), n)
        elif heading := _heading_version(line):
            if heading in tps:
                raise TableInvalid(f"Line {n} names {heading} a second time.")
            version = heading
            tps[version] = {}
    tps = {v: levels for v, levels in tps.items() if levels}
    if not tps:
        return None
    levels = list(first_line)
    rows = [[str(c), *(tps[v].get(c, "-") for v in tps)] for c in levels]
    return Table(headers=["clients", *tps], rows=rows, lines=[first_line[c] for c in levels])


def label_column(table: Table, clients: int | None) -> int | None:
    """The column whose values tell apart rows of one client level (a model, a workload), when
    the table gives a level more than once: the first column of text with several values."""
    if clients is None:
        return None
    levels = [row[clients] for row in table.rows]
    if len(set(levels)) == len(levels):
        return None
    for index in range(len(table.headers)):
        values = [row[index] for row in table.rows]
        if index != clients and len(set(values)) > 1 and not all(map(_is_number, values)):
            return index
    return None


def column_values(table: Table, index: int) -> list[str]:
    """The values of a label column to choose from, in the table's order: its distinct cells,
    or, when every row's label differs (`只读 1亿 -c 52 ...`, `TPC-B 1亿 -c 52 ...`), their
    distinct first words (`只读`, `TPC-B`) when there are several."""
    cells = [row[index].strip() for row in table.rows]
    if len(set(cells)) < len(cells):
        return list(dict.fromkeys(cells))
    words = list(dict.fromkeys(cell.split()[0] for cell in cells if cell))
    return words if len(words) > 1 else cells


def _label_matches(cell: str, wanted: str) -> bool:
    cell = cell.strip().casefold()
    return cell == wanted or (
        cell.startswith(wanted) and cell[len(wanted) : len(wanted) + 1].isspace()
    )


def rows_with(table: Table, index: int, value: str, *, field: str) -> Table:
    """The table with only the rows whose column `index` holds `value`, or starts with it as a
    word (compared without case or surrounding space); TableInvalid naming `field` when none
    does."""
    wanted = value.strip().casefold()
    kept = [i for i, row in enumerate(table.rows) if _label_matches(row[index], wanted)]
    if not kept:
        raise TableInvalid(
            f"No row has {value!r} under {table.headers[index]!r}; its values are "
            f"{', '.join(column_values(table, index))}.",
            field,
        )
    return Table(
        headers=table.headers,
        rows=[table.rows[i] for i in kept],
        lines=[table.lines[i] for i in kept],
        plain=table.plain,
    )
