"""Reads of compare/: every query the comparison, its verdicts, the History page and the host's
noise make goes through here, and each module states its query count.

- comparisons: the runs a comparison compares, their sets and aggregates (comparison_get);
- versions: which run stands for a version (versions_q, versions_pick, version_runs);
- sets: each version's set of runs and its aggregates (runs_pooled, pooled_levels);
- choices: what the selection form offers (compare_choices, versions_grouped);
- repeats: what the verdicts are made of, the pooled repeats and the host's history;
- shown: everything a comparison shows, read once for the page and the API (comparison_show);
- cached: what comparison_show computes, kept in the cache under the state of the runs it comes
  from (comparison_cached, comparison_state), and reads of the cache that survive Redis down;
- presentations: what an experiment's presentation is built from (presentation_read) and a
  connections presentation's progress (progress_read);
- splits: what each point of a series holds equal besides its key (with_threads, held_runs);
- experiments: what has been run of each experiment, and one experiment on one host;
- history: one series over time (history_get);
- why: the why section's evidence at one level (why_read; compare.why picks the level);
- latency: each set's latency percentiles per level (comparison_latency);
- host_noise: a host's run-to-run variation per workload and level (host_noise_rows);
- recent: the comparisons of the jobs just finished (comparison_recent), for Home.
"""

from benchhub.compare.selectors.choices import (
    MAX_CHOICES,
    Choices,
    VersionGroup,
    compare_choices,
    versions_grouped,
)
from benchhub.compare.selectors.comparisons import (
    MAX_COMPARED,
    RUN_DEFERRED,
    Comparison,
    ComparisonError,
    LeftOut,
    PartialNote,
    comparison_build,
    comparison_get,
    run_levels,
    run_threads,
    runs_compared,
)
from benchhub.compare.selectors.experiments import (
    MAX_EXPERIMENT_RUNS,
    MAX_INDEX_ROWS,
    ExperimentResults,
    Ran,
    experiment_get,
    experiment_index,
    experiment_newest_host,
)
from benchhub.compare.selectors.history import (
    HISTORY_MAX_POINTS,
    POINT_COLUMNS,
    History,
    HistoryPoint,
    history_get,
)
from benchhub.compare.selectors.host_noise import (
    HOST_NOISE_REPEATS,
    HOST_NOISE_RESULTS,
    NoiseRow,
    host_noise_rows,
)
from benchhub.compare.selectors.latency import CURVE_PERCENTILES, comparison_latency
from benchhub.compare.selectors.presentations import (
    MAX_PROGRESS_POINTS,
    MAX_STREAM_ROWS,
    LevelThreads,
    PresentationRead,
    ProgressRead,
    StreamValues,
    TelemetryMeans,
    level_threads,
    presentation_of,
    presentation_read,
    progress_read,
    stream_values,
    telemetry_means,
)
from benchhub.compare.selectors.recent import RecentComparison, comparison_recent
from benchhub.compare.selectors.repeats import (
    MAX_HISTORY_RESULTS,
    REPEAT_FIELDS,
    comparison_history_spreads,
    comparison_repeats,
)
from benchhub.compare.selectors.sets import (
    MAX_POOLED_RUNS,
    POOLED_COLUMNS,
    pooled_levels,
    runs_pooled,
)
from benchhub.compare.selectors.shown import (
    ComparisonShown,
    comparison_show,
)
from benchhub.compare.selectors.splits import HELD_COLUMNS, held_runs, with_threads
from benchhub.compare.selectors.versions import (
    MAX_CANDIDATES,
    version_runs,
    versions_pick,
    versions_q,
)
from benchhub.compare.selectors.why import (
    Why,
    WhySide,
    why_read,
)
from benchhub.compare.types import Series

__all__ = [
    "CURVE_PERCENTILES",
    "HELD_COLUMNS",
    "HISTORY_MAX_POINTS",
    "HOST_NOISE_REPEATS",
    "HOST_NOISE_RESULTS",
    "MAX_CANDIDATES",
    "MAX_CHOICES",
    "MAX_COMPARED",
    "MAX_EXPERIMENT_RUNS",
    "MAX_HISTORY_RESULTS",
    "MAX_INDEX_ROWS",
    "MAX_POOLED_RUNS",
    "MAX_PROGRESS_POINTS",
    "MAX_STREAM_ROWS",
    "POINT_COLUMNS",
    "POOLED_COLUMNS",
    "REPEAT_FIELDS",
    "RUN_DEFERRED",
    "Choices",
    "Comparison",
    "ComparisonError",
    "ComparisonShown",
    "ExperimentResults",
    "History",
    "HistoryPoint",
    "LeftOut",
    "LevelThreads",
    "NoiseRow",
    "PartialNote",
    "PresentationRead",
    "ProgressRead",
    "Ran",
    "RecentComparison",
    "Series",
    "StreamValues",
    "TelemetryMeans",
    "VersionGroup",
    "Why",
    "WhySide",
    "compare_choices",
    "comparison_build",
    "comparison_get",
    "comparison_history_spreads",
    "comparison_latency",
    "comparison_recent",
    "comparison_repeats",
    "comparison_show",
    "experiment_get",
    "experiment_index",
    "experiment_newest_host",
    "held_runs",
    "history_get",
    "host_noise_rows",
    "level_threads",
    "pooled_levels",
    "presentation_of",
    "presentation_read",
    "progress_read",
    "run_levels",
    "run_threads",
    "runs_compared",
    "runs_pooled",
    "stream_values",
    "telemetry_means",
    "version_runs",
    "versions_grouped",
    "versions_pick",
    "versions_q",
    "why_read",
    "with_threads",
]
