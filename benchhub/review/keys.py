"""The comparison key: the compare permalink's query string in one normal form.

`/compare/?versions=13,14&host=b&workload=w` and `?workload=w&host=b&versions=13,14` name the same
comparison, so a thread attached to one shows on the other. Only the permalink's own parameters
count (workload, host, versions, same_hardware, invalid, runs, tag: a comparison of tagged runs
is another comparison); they are sorted by name, values
keep their order (the first version is the baseline), and flags are kept only when on.
"""

from urllib.parse import parse_qsl, urlencode, urlsplit

from benchhub.errors import ApplicationError
from benchhub.querystrings import flag
from benchhub.review.models import MAX_KEY

PARAMETERS = ("host", "invalid", "runs", "same_hardware", "tag", "versions", "workload")
FLAGS = ("invalid", "same_hardware")


class KeyInvalid(ApplicationError):
    """The text names no comparison."""


def comparison_key(query: str) -> str:
    """The normal form of a compare permalink (a URL or its query string). Raises KeyInvalid
    when it names no comparison."""
    if "?" in query or query.startswith("/"):
        query = urlsplit(query).query
    pairs = dict(parse_qsl(query.lstrip("?"), keep_blank_values=False))
    kept = {}
    for name in PARAMETERS:
        value = pairs.get(name, "").strip()
        if name in FLAGS:
            if flag(value):
                kept[name] = "1"
        elif value:
            kept[name] = ",".join(part.strip() for part in value.split(",") if part.strip())
    if not (kept.get("runs") or kept.get("versions")):
        raise KeyInvalid("invalid", "A comparison names versions or runs.", field="key")
    key = urlencode(kept, safe=",")
    if len(key) > MAX_KEY:
        raise KeyInvalid(
            "invalid", f"A comparison key is at most {MAX_KEY} characters.", field="key"
        )
    return key
