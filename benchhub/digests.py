"""One way to fingerprint data: SHA-256 of its canonical JSON (sorted keys, no spaces).

Hardware fingerprints, configuration and workload hashes, comparability keys and upload digests
all use it, so equal content always gives equal digests across the code base.
"""

import hashlib
import json
from collections.abc import Callable
from typing import Any


def canonical_digest(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=default)
    return hashlib.sha256(canonical.encode()).hexdigest()
