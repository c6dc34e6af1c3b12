"""How much of a stored text a page or an API answer shows: its head, never the whole.

An import's text (up to 10 MB) and a result's raw output (up to 5 MB) are kept whole, but a page
that showed them whole grew with them: every `>` of a pasted quote is `&gt;` once escaped, so a
4.6 MB import of nested quote lines was a 21 MB run page, and twenty readers of it starved the
workers. So a page shows each text's head (at most `IMPORT_SHOWN_CHARS`, `OUTPUT_SHOWN_CHARS`),
the outputs of one page together at most `OUTPUTS_SHOWN_CHARS`, and links to the whole text
(`GET /api/v1/runs/<uuid>/import-text/`, `.../results/<id>/output/`, text/plain). HTML escaping
makes a character at most 6 (`&quot;`, `&#x27;`), so the texts of a run page stay under
6 x (IMPORT_SHOWN_CHARS + OUTPUTS_SHOWN_CHARS) characters whatever was imported.
"""

from dataclasses import dataclass
from typing import Any

from django.db import connection

from benchhub.blobs import ESCAPE, MARK, TEXT_PREFIX, blob_get

IMPORT_SHOWN_CHARS = 32_000
OUTPUT_SHOWN_CHARS = 16_000
OUTPUTS_SHOWN_CHARS = 64_000


@dataclass(frozen=True)
class Excerpt:
    """The head of a text as shown, and how long the whole is (characters)."""

    head: str
    total_chars: int

    @property
    def cut(self) -> bool:
        return len(self.head) < self.total_chars

    @property
    def hidden_chars(self) -> int:
        return self.total_chars - len(self.head)


def excerpt(text: str, *, limit: int) -> Excerpt:
    """The first `limit` characters of `text` (at most), ended at a line's end when one falls
    in the second half, so a cut does not split a line that fits."""
    if len(text) <= limit:
        return Excerpt(head=text, total_chars=len(text))
    return Excerpt(head=_cut(text, limit), total_chars=len(text))


def _cut(text: str, limit: int) -> str:
    head = text[:limit]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline >= limit // 2 else head


def output_excerpts(texts: list[Excerpt]) -> list[Excerpt]:
    """Excerpts of one page's raw outputs (each given as its head of at least
    OUTPUT_SHOWN_CHARS, or whole, with its length), in order: each at most OUTPUT_SHOWN_CHARS
    and all together at most OUTPUTS_SHOWN_CHARS (the later ones show less, or nothing, once
    the page's share is spent)."""
    left = OUTPUTS_SHOWN_CHARS
    shown = []
    for text in texts:
        limit = min(OUTPUT_SHOWN_CHARS, left)
        head = text.head if text.total_chars <= limit else _cut(text.head, limit)
        shown.append(Excerpt(head=head, total_chars=text.total_chars))
        left -= len(head)
    return shown


# (table, owner column) of each detail text a page shows the head of; names from code only.
IMPORT_TEXTS = ("results_runimporttext", "run_id")
RESULT_OUTPUTS = ("results_resultoutput", "result_id")


def text_heads(*, source: tuple[str, str], owner_ids: list[int], limit: int) -> dict[int, Excerpt]:
    """The first `limit` characters of each owner's text and its whole length, cut in the
    database: a page of a 5 MB output reads its head, not the 5 MB (20 readers of the largest
    import once kept every worker busy shipping whole texts). Owners without a text are
    absent. A text kept in the bucket (benchhub.blobs) is read whole, then cut."""
    table, owner = source
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {owner}, left(text, %s), char_length(text) FROM {table}"  # noqa: S608
            f" WHERE {owner} = ANY(%s)",
            [limit + len(ESCAPE), owner_ids],
        )
        rows = cursor.fetchall()
    return {owner_id: _head(head, chars, limit) for owner_id, head, chars in rows}


NO_TEXT = Excerpt(head="", total_chars=0)


def import_text_url(*, run_uuid: object) -> str:
    """Where an imported run's whole text is read (texts_api.RunImportTextView)."""
    return f"/api/v1/runs/{run_uuid}/import-text/"


def result_output_url(*, run_uuid: object, result_id: int) -> str:
    """Where a result's whole raw output is read (texts_api.ResultOutputView)."""
    return f"/api/v1/runs/{run_uuid}/results/{result_id}/output/"


def run_import_head(*, run: Any) -> Excerpt:
    """The head of the text `run` was imported from (at most IMPORT_SHOWN_CHARS); empty for an
    agent's run or once retention dropped it."""
    heads = text_heads(source=IMPORT_TEXTS, owner_ids=[run.pk], limit=IMPORT_SHOWN_CHARS)
    return heads.get(run.pk, NO_TEXT)


def _head(stored: str, chars: int, limit: int) -> Excerpt:
    if not stored.startswith(MARK):
        return Excerpt(head=stored[:limit], total_chars=chars)
    if stored.startswith(ESCAPE):
        return Excerpt(head=stored[len(ESCAPE) :][:limit], total_chars=chars - len(ESCAPE))
    whole = blob_get(digest=stored.removeprefix(TEXT_PREFIX)).decode()
    return Excerpt(head=whole[:limit], total_chars=len(whole))


# The longest stored value that stands for a text in the bucket: its prefix and a sha256 in hex.
_REFERENCE_CHARS = len(TEXT_PREFIX) + 64


def text_window(
    *, source: tuple[str, str], owner_id: int, offset: int, limit: int
) -> Excerpt | None:
    """Characters `offset` .. `offset + limit` of the owner's text (as `head`) and the whole
    text's length, cut in the database as text_heads cuts; None when the owner has no text. A
    text kept in the bucket is read whole, then cut."""
    table, owner = source
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT left(text, %s), char_length(text),"  # noqa: S608
            " substr(text, %s + CASE WHEN starts_with(text, %s) THEN %s ELSE 0 END, %s)"
            f" FROM {table} WHERE {owner} = %s",
            [_REFERENCE_CHARS, offset + 1, ESCAPE, len(ESCAPE), limit, owner_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    start, chars, window = row
    if start.startswith(TEXT_PREFIX):
        whole = blob_get(digest=start.removeprefix(TEXT_PREFIX)).decode()
        return Excerpt(head=whole[offset : offset + limit], total_chars=len(whole))
    if start.startswith(ESCAPE):
        chars -= len(ESCAPE)
    return Excerpt(head=window, total_chars=chars)
