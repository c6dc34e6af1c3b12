"""Which run stands for a version: a version asked exactly, or a bare major ("13", "9.6") as
its series of unpatched builds (versions_q, versions_pick), and among a workload's runs on a
host the one comparability key that covers the most versions (version_runs)."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from benchhub.builds.versions import PATCH_MARK, VersionError, version_parse
from benchhub.results.models import Run


def versions_q(versions: list[str]) -> Q:
    """Runs of these versions: each exactly, and a bare major ("13", "9.6") as its whole series
    of unpatched builds (releases, pre-releases, snapshots)."""
    matches = Q()
    for version in versions:
        matches |= Q(build__version=version)
        series = _series(version)
        if series is not None:
            matches |= Q(build__major=series) & ~Q(build__version__contains=PATCH_MARK)
    return matches


def versions_pick(versions: list[str], runs: list[Run]) -> dict[str, Run]:
    """For each version asked for, the run that stands for it among `runs` (if any)."""
    picked = {}
    for version in versions:
        run = _newest_of(version, runs)
        if run is not None:
            picked[version] = run
    return picked


def _series(version: str) -> str | None:
    """The major a bare major names ("13", "9.6"), else None (a version, or not one at all)."""
    try:
        parsed = version_parse(version)
    except VersionError:
        return None
    return parsed.major if parsed.series else None


def _newest_of(version: str, runs: list[Run]) -> Run | None:
    """The run of exactly `version`, else (for a bare major such as "13") the newest run of
    any unpatched build in that series, so "13 against 14" finds 13.23 and 14.23."""
    exact = [run for run in runs if run.build.version == version]
    major = _series(version)
    if exact or major is None:
        return exact[0] if exact else None
    series = [
        run for run in runs if run.build.major == major and PATCH_MARK not in run.build.version
    ]
    return max(series, key=lambda run: (run.started_at, run.id), default=None)


# The newest run of each (version, key) read to choose from: enough for any selection of at most
# MAX_COMPARED versions, however long their history.
MAX_CANDIDATES = 500


def version_runs(runs: QuerySet[Run], versions: list[str]) -> tuple[list[Run], list[str]]:
    """Among `runs` (already narrowed to a workload and a host), the run standing for each
    version, in the order asked, and the versions whose run had to come from another
    comparability key than the others'.

    Runs are chosen by comparability key, not by workload name alone: two sizes of one catalog
    entry share a name but not a key. The key chosen is the one whose runs cover the most of
    the versions asked (the newest on a tie); each version takes its newest run under that key,
    and only a version with none under it falls back to its newest run of any key. One query.
    """
    runs = runs.filter(versions_q(versions))
    # DISTINCT ON keeps the newest run of each (build version, key), as ORDER BY puts it first.
    candidates = list(
        runs.order_by("build__version", "comparability_key", "-started_at", "-id").distinct(
            "build__version", "comparability_key"
        )[:MAX_CANDIDATES]
    )
    candidates.sort(key=lambda run: (run.started_at, run.id), reverse=True)
    by_key: dict[str, list[Run]] = {}
    for run in candidates:
        by_key.setdefault(run.comparability_key, []).append(run)
    picks = {key: versions_pick(versions, group) for key, group in by_key.items()}
    # Candidates are newest first, so on equal coverage the key seen first is the newest.
    best = max(picks, key=lambda key: len(picks[key]), default=None)
    picked = picks[best] if best is not None else {}
    newest = versions_pick(versions, candidates)
    mixed = [v for v in versions if v not in picked and v in newest]
    by_version = {**newest, **picked}
    return [by_version[v] for v in versions if v in by_version], mixed
