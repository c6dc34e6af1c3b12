"""Where a bisection starts: two runs of a comparison (good, then bad), or a detected regression
(its last run before the change and its first run after). From them come the defaults of every
field of the request:

- the recipe: a git recipe of the runs' repository (their builds' provenance names it), and the
  two commits they were built from;
- the host, and the measurement as the good run made it: workload definition, scale, duration,
  warm-up, configuration overrides (jobs.services.job_request_of);
- the client level: the regression's, or the level both runs measured where the change is
  largest (|log(bad / good)| of their mean steady-state tps);
- the change: bad / good mean tps at that level (for a regression, 1 + its change).

A field the request gives wins over its default.
"""

import math
import statistics
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchhub.bisections.models import BISECTION_PLAN_FIELDS
from benchhub.builds.models import Recipe
from benchhub.jobs.services import job_request_of
from benchhub.regressions.models import Regression
from benchhub.results.models import Result, Run

# The request fields that name an origin (the API's, the form's, the query string's).
ORIGIN_FIELDS = ("good_run", "bad_run", "regression")
# A ratio closer to 1 than this is no change to look for (decide.given_change refuses it).
NO_CHANGE = 1e-3


class OriginError(ValueError):
    """An origin that cannot start a bisection: `field` is the request's field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Origin:
    good_run: Run
    bad_run: Run
    regression: Regression | None = None


def origin_get(
    *, good_run: str | None = None, bad_run: str | None = None, regression: int | None = None
) -> Origin:
    """The runs named by uuid, or the regression by id. OriginError naming the field when one
    does not exist, when only one run is named, or when both a regression and runs are."""
    if regression is not None:
        if good_run or bad_run:
            raise OriginError("regression", "Start from a regression or from two runs, not both.")
        found = (
            Regression.objects.select_related("run_before", "run_after")
            .filter(pk=regression)
            .first()
        )
        if found is None:
            raise OriginError("regression", f"No regression {regression}.")
        return Origin(found.run_before, found.run_after, found)
    runs = []
    for field, value in (("good_run", good_run), ("bad_run", bad_run)):
        if not value:
            raise OriginError(field, "Name both runs (good_run and bad_run), by uuid.")
        try:
            run_id = uuid.UUID(str(value))
        except ValueError:
            raise OriginError(field, f"{value!r} is not a run's uuid.") from None
        run = Run.objects.select_related("host", "build", "workload").filter(uuid=run_id).first()
        if run is None:
            raise OriginError(field, f"No run {run_id}.")
        runs.append(run)
    if runs[0].pk == runs[1].pk:
        raise OriginError("bad_run", "The good run and the bad run are the same run.")
    return Origin(runs[0], runs[1])


def origin_defaults(origin: Origin, *, clients: int | None = None) -> dict[str, Any]:
    """The request fields the origin gives (see the module's text); `clients` given: the change
    at that level. OriginError naming the field when the runs are not two git builds of one
    repository with a recipe, or share no measured level."""
    good, bad = origin.good_run, origin.bad_run
    repository, commits = _git_commits(good, bad)
    recipe = (
        Recipe.objects.filter(source_kind=Recipe.Kind.GIT, url=repository)
        .order_by("sort_key", "name")
        .first()
    )
    if recipe is None:
        raise OriginError(
            "recipe", f"No git recipe builds from {repository}: define one (/recipes/) first."
        )
    request = job_request_of(good)
    defaults: dict[str, Any] = {
        "recipe": recipe.name,
        "good": commits[0],
        "bad": commits[1],
        "host": good.host.name,
        **{key: request[key] for key in ("workload", *BISECTION_PLAN_FIELDS) if key in request},
    }
    if origin.regression is not None and clients in (None, origin.regression.clients):
        defaults["clients"] = origin.regression.clients
        defaults["change"] = _change(1 + origin.regression.change)
        return defaults
    level, change = largest_change(level_means(good), level_means(bad), clients=clients)
    defaults["clients"] = level
    defaults["change"] = _change(change)
    return defaults


def bisectable(good: Run, bad: Run) -> bool:
    """Whether the two runs are builds of two commits of one git repository (no query: their
    builds loaded), so a page may offer "Find the commit" between them."""
    try:
        _git_commits(good, bad)
    except OriginError:
        return False
    return True


def _git_commits(good: Run, bad: Run) -> tuple[str, tuple[str, str]]:
    sources = [((run.build.provenance or {}).get("source") or {}) for run in (good, bad)]
    for field, run, source in zip(("good_run", "bad_run"), (good, bad), sources, strict=True):
        if source.get("kind") != "git" or not source.get("repository") or not source.get("commit"):
            raise OriginError(
                field,
                f"Run {run.uuid} measured {run.build.version}, which was not built from a git "
                "commit: there is no range of commits to search.",
            )
    repository = sources[0]["repository"]
    if sources[1]["repository"] != repository:
        raise OriginError(
            "bad_run",
            f"The runs were built from two repositories ({repository}, "
            f"{sources[1]['repository']}): a bisection searches one.",
        )
    if sources[0]["commit"] == sources[1]["commit"]:
        raise OriginError("bad_run", "Both runs were built from the same commit.")
    return repository, (sources[0]["commit"], sources[1]["commit"])


def level_means(run: Run) -> dict[int, float]:
    """The run's mean steady-state tps at each client level, over its valid repeats."""
    values: dict[int, list[float]] = {}
    rows = Result.objects.filter(run=run, aborted=False, steady_tps__gt=0).values_list(
        "clients", "steady_tps"
    )
    for level, tps in rows:
        if tps is not None:
            values.setdefault(level, []).append(tps)
    return {level: statistics.fmean(tps) for level, tps in values.items()}


def largest_change(
    good: Mapping[int, float], bad: Mapping[int, float], *, clients: int | None = None
) -> tuple[int, float]:
    """(level, bad / good) where the two differ most on the log scale, among the levels both
    measured; with `clients` given, at that level. OriginError naming `clients` otherwise."""
    shared = sorted(set(good) & set(bad))
    if clients is not None:
        if clients not in shared:
            raise OriginError(
                "clients",
                f"Both runs must have a valid result at {clients} clients; they share "
                f"{', '.join(map(str, shared)) or 'none'}.",
            )
        return clients, bad[clients] / good[clients]
    if not shared:
        raise OriginError("clients", "The runs share no client level with a valid result.")
    level = max(shared, key=lambda c: (abs(math.log(bad[c] / good[c])), -c))
    return level, bad[level] / good[level]


def _change(value: float) -> float | None:
    """The change to look for, None (measured from the ends) when it is no change."""
    return (
        value if math.isfinite(value) and value > 0 and abs(math.log(value)) >= NO_CHANGE else None
    )
