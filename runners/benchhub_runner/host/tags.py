"""Host tags, said once: what a host offers (its agent's `tags`, sent with every claim) and what a
job or schedule may require (its `host_tags`: only a host offering all of them claims it).
Standard library only.

The agent checks its configuration with host_tags_problems; the server derives its claim and job
fields from the same bounds (benchhub.api.fields.host_tags_field), so a tag the agent accepts is
one the server takes, and the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

HOST_TAG_MAX_LENGTH = 64
HOST_TAGS_MAX = 20
# Lower-case, so that `NVMe` and `nvme` are never two tags a job and a host miss each other by,
# and without `*`, which a host grant reads as "every host" (docs/security.md).
HOST_TAG = re.compile(rf"^[a-z0-9][a-z0-9._-]{{0,{HOST_TAG_MAX_LENGTH - 1}}}$")
HOST_TAG_RULE = (
    f"use 1 to {HOST_TAG_MAX_LENGTH} lower-case letters, digits and . _ -, starting with a "
    "letter or digit"
)


def host_tags_problems(tags: Sequence[object], *, field: str) -> dict[str, str]:
    """What is wrong with a list of host tags, by its path under `field` (`tags[1]`: that tag's
    spelling; `tags`: too many or repeated). Empty: nothing."""
    problems: dict[str, str] = {}
    if len(tags) > HOST_TAGS_MAX:
        problems[field] = f"At most {HOST_TAGS_MAX} tags, not {len(tags)}."
    for index, tag in enumerate(tags):
        if not isinstance(tag, str) or not HOST_TAG.match(tag):
            problems[f"{field}[{index}]"] = f"{tag!r}: {HOST_TAG_RULE}."
    if field not in problems and len(set(map(str, tags))) != len(tags):
        problems[field] = "Each tag once."
    return problems
