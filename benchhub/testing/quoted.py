"""The largest import the server accepts, in the shape that once made the largest page: a real
pgbench output whose every line is quoted deeper and deeper (`> > > ...`), each `>` four
characters once escaped for HTML."""

from django.conf import settings

from benchhub.results.import_serializers import OUTPUT_TEXT_MAX
from benchhub.results.serializers import RAW_OUTPUT_MAX
from benchhub.testing.processes import ROOT

OUTPUT = ROOT / "runners" / "tests" / "fixtures" / "pasted"
OUTPUT_NAME = "indented-4-prose-pg15-select-only-P1-r-T3.txt"
# What the rest of an import's JSON body takes beside the text (its keys, the escaped newlines).
BODY_SPARE = 50_000


def nested_quotes(*, chars: int) -> str:
    """The output with every line quoted as deep as keeps the whole within `chars` characters."""
    text = (OUTPUT / OUTPUT_NAME).read_text()
    lines = text.splitlines()
    depth = max(0, (chars - len(text) - len(lines)) // (2 * len(lines)))
    return "".join("> " * depth + line + "\n" for line in lines)


def largest_import_texts() -> list[str]:
    """The outputs of the largest import the server takes: each as large as a result's raw
    output may be, as many as fit in one request body."""
    chars = min(OUTPUT_TEXT_MAX, RAW_OUTPUT_MAX)
    count = max(1, (settings.MAX_UPLOAD_BYTES - BODY_SPARE) // chars)
    per_output = min(chars, (settings.MAX_UPLOAD_BYTES - BODY_SPARE) // count)
    return [nested_quotes(chars=per_output)] * count
