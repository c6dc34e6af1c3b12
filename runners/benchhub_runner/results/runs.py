"""One version's run while a job goes on: what the job learns about it and what its upload
payload (payload.py) is built from. A layer below the job (job/) so that the payload reads it
without importing the job that runs it."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..build import Build
from ..evidence import ServerEvidence
from ..servers.cluster import Cluster
from ..servers.installation import Installation


@dataclass
class VersionRun:
    """What is known about one version's run while the job goes on."""

    requested: str
    installation: Installation
    cluster: Cluster
    run_uuid: str = field(default_factory=lambda: str(uuid.uuid4()))
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    settings: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    server_version: str = ""
    init_output: str = ""
    init_timings: dict[str, float] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    stopped: dict[str, Any] | None = None  # where and why a partial run's sweep stopped
    build: Build | None = None
    evidence: ServerEvidence | None = None  # what the server can give (None: probe failed)
