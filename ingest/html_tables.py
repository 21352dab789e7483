"""Give every row of an HTML table its full set of cells before markdownify writes it.

markdownify writes a table row as the cells it holds, left to right. A cell merged down over
the rows below (``rowspan``; mammoth writes Word's ``w:vMerge`` that way) is held only by its
first row, so each row below it came out one cell short and its values moved one column to
the left: "| $12.00 | cust_4712 |" stood under Item | Amount instead of Amount | Account,
which changes what a value means. :func:`square_tables` lays each table out on its grid and
puts an empty cell wherever a merged cell covers a column (down or across) and at the end of
a row that is short, so every row has as many cells as the table is wide.

The covered places are left **empty**, not filled with the merged cell's value: a repeated
value would read as a second amount or a second party (two fees of $247.83 where the
contract has one), while an empty cell adds no words and keeps every value in its column.

:func:`escape_cell_pipes` writes a literal ``|`` inside a cell as ``\\|`` (the GFM table escape),
so that a cell reading "cust_4712 | EU" is not split into two columns.

Pure functions over a BeautifulSoup tree, changed in place; no Django.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

MAX_SPAN = 1000  # markdownify's own limit for colspan
_CELLS = ("td", "th")


def square_tables(soup: BeautifulSoup) -> None:
    """Expand every ``rowspan``/``colspan`` in ``soup`` into empty cells and pad short rows."""
    for table in soup.find_all("table"):
        _square(soup, table)


def escape_cell_pipes(soup: BeautifulSoup) -> None:
    """Write each ``|`` in the text of a table cell as ``\\|``."""
    for text in list(soup.find_all(string=lambda s: "|" in s)):
        if isinstance(text, Comment) or text.find_parent(_CELLS) is None:
            continue
        text.replace_with(NavigableString(text.replace("|", "\\|")))


def layout(rows: list[list[tuple[int, int]]]) -> tuple[list[list[int]], int]:
    """Grid columns of each cell, from each row's cells as ``(colspan, rowspan)``.

    Returns the first column of every cell, row by row, and the table's width. A column covered
    by a cell from a row above is skipped, as browsers place cells. A rowspan of 0 reaches the
    last row.
    """
    covered: dict[int, int] = {}  # column -> rows still covered below the current one
    columns: list[list[int]] = []
    width = 0
    for index, cells in enumerate(rows):
        here = {col for col, left in covered.items() if left > 0}
        starts, col = [], 0
        for colspan, rowspan in cells:
            while col in here:
                col += 1
            starts.append(col)
            down = len(rows) - index if rowspan == 0 else rowspan
            for c in range(col, col + colspan):
                here.add(c)
                if down > 1:
                    covered[c] = down  # decremented below, with the others, for this row
            col += colspan
        covered = {c: left - 1 for c, left in covered.items() if left - 1 > 0}
        columns.append(starts)
        width = max(width, max(here, default=-1) + 1)
    return columns, width


def _square(soup: BeautifulSoup, table: Tag) -> None:
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    cells = [tr.find_all(_CELLS, recursive=False) for tr in rows]
    spans = [[(_span(c, "colspan", 1), _span(c, "rowspan", 0)) for c in row] for row in cells]
    columns, width = layout(spans)
    for tr, row, starts, row_spans in zip(rows, cells, columns, spans):
        name = "th" if row and all(c.name == "th" for c in row) else "td"
        taken: dict[int, Tag | None] = {}
        for cell, start, (colspan, _) in zip(row, starts, row_spans):
            taken.update({c: None for c in range(start + 1, start + colspan)})
            taken[start] = cell
            for attribute in ("colspan", "rowspan"):
                cell.attrs.pop(attribute, None)
        _fill(soup, tr, taken, width, name)


def _fill(soup: BeautifulSoup, tr: Tag, taken: dict[int, Tag | None], width: int, name: str) -> None:
    """Insert an empty cell at every column of ``tr`` that holds no cell of its own."""
    following: Tag | None = None
    for col in reversed(range(width)):
        cell = taken.get(col)
        if cell is not None:
            following = cell
            continue
        empty = soup.new_tag(name)
        if following is not None:
            following.insert_before(empty)
        else:
            tr.append(empty)
        following = empty


def _span(cell: Tag, attribute: str, low: int) -> int:
    """The cell's ``colspan``/``rowspan`` as a number from ``low`` to :data:`MAX_SPAN` (1 if unreadable)."""
    value = str(cell.get(attribute, "")).strip()
    return max(low, min(MAX_SPAN, int(value))) if value.isdigit() else 1
