"""Everything a comparison shows, read once for the Compare page and the compare API
(comparison_show)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchhub.compare.selectors.cached import comparison_cached
from benchhub.compare.selectors.comparisons import Comparison, comparison_get
from benchhub.compare.selectors.latency import comparison_latency
from benchhub.compare.selectors.presentations import presentation_read, progress_read
from benchhub.compare.selectors.why import Why
from benchhub.workloads.models import Workload

if TYPE_CHECKING:
    from benchhub.compare.assessment import Assessment, VersionAssessment
    from benchhub.compare.knees import VersionKnee
    from benchhub.compare.presentations.connections import Progress
    from benchhub.compare.tables import Row, Summary


@dataclass
class ComparisonShown:
    """Everything a comparison shows, read once for the Compare page and the compare API.

    `comparison` the runs and their sets (comparison_get); `assessment` the verdicts, in
    numbers and words (compare.assessment); `rows`, `summary`, `captions`, `set_lines`,
    `unlike_notes`, `pooled_hosts` the tables and lines of compare.tables; `verdict_lines` each
    version's assessment with its client-bound levels; `presentation` the tables of the
    workload's presentation (compare.presentations.presentation_tables); `why` the why section
    (compare.why; None without a level); `latency` each set's latency percentiles per level
    (selectors.latency: series run id -> clients -> percentile -> ms); `knees` each version's
    knee (compare.knees), baseline first. What only the page shows, read when asked for
    (`page`): `progress`, the progress lines of a connections presentation.
    """

    comparison: Comparison
    assessment: Assessment
    rows: list[Row] = field(default_factory=list)
    summary: list[Summary] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    set_lines: list[str] = field(default_factory=list)
    unlike_notes: list[str] = field(default_factory=list)
    verdict_lines: list[tuple[VersionAssessment, list[int]]] = field(default_factory=list)
    pooled_hosts: list[str] = field(default_factory=list)
    presentation: dict[str, Any] = field(default_factory=dict)
    why: Why | None = None
    latency: dict[int, dict[int, dict[str, float | None]]] = field(default_factory=dict)
    knees: list[VersionKnee] = field(default_factory=list)
    progress: list[Progress] = field(default_factory=list)


def comparison_show(
    *,
    selection: dict[str, Any],
    threshold: float,
    page: bool = False,
    level: int | None = None,
    why: int | None = None,
    sections: bool = True,
) -> ComparisonShown:
    """What a comparison shows: the comparison of `selection` (comparison_get's arguments),
    assessed at `threshold` (a fraction, 0.02 = 2 %), with its tables, presentation and why
    section (at `why` clients when compared, else the level the verdicts pick). With `page`,
    also a connections presentation's progress lines (at `level`). The API and the page read
    the same numbers through it. Queries: comparison_get's, the assessment's two, the
    presentation's one (none for a sweep), the why section's two, the latency percentiles' one
    (none without a compared level), and with `page` the progress
    lines' two (connections only). Without `sections` (the Compare page's first screen: the
    verdicts and the two charts), only the comparison, its assessment and the lines about its
    sets: no presentation, why section, latency percentiles, knees or tables, and none of their
    queries. Raises ComparisonError as comparison_get does.

    Cached under the state of the runs it comes from (selectors.cached.comparison_cached): a
    request that finds it there makes one query (that state) instead of all of the above, and
    one that does not makes that one more."""
    return comparison_cached(
        selection=selection,
        variant=(threshold, page, level, why, sections),
        compute=lambda: _shown(
            selection=selection,
            threshold=threshold,
            page=page,
            level=level,
            why=why,
            sections=sections,
        ),
    )


def _shown(
    *,
    selection: dict[str, Any],
    threshold: float,
    page: bool,
    level: int | None,
    why: int | None,
    sections: bool,
) -> ComparisonShown:
    # The modules that assess and tabulate a comparison import the selectors (its types, its
    # reads): they are imported here, when the first comparison is shown, not while the
    # selectors package loads.
    from benchhub.compare import knees, presentations, tables
    from benchhub.compare.assessment import comparison_assess
    from benchhub.compare.why import why_get

    comparison = comparison_get(**selection)
    assessment = comparison_assess(comparison, threshold=threshold)
    shown = ComparisonShown(comparison=comparison, assessment=assessment)
    if sections:
        shown.presentation = presentations.presentation_tables(
            [comparison], presentation_read([comparison])
        )
    if not comparison.series:
        return shown
    shown.captions = tables.captions(comparison)
    shown.set_lines = tables.set_lines(comparison)
    shown.unlike_notes = tables.unlike_notes(comparison)
    shown.verdict_lines = [
        (version, tables.client_bound_levels(comparison, version))
        for version in assessment.versions
    ]
    shown.pooled_hosts = tables.pooled_hosts(comparison)
    if not sections:
        return shown
    shown.latency = comparison_latency(comparison)
    shown.knees = knees.comparison_knees(comparison, assessment)
    shown.rows = tables.comparison_rows(comparison, assessment, latency=shown.latency)
    shown.summary = tables.comparison_summary(comparison, assessment)
    shown.why = why_get(comparison, assessment, asked=why)
    if page:
        if shown.presentation["presentation"] == Workload.Presentation.CONNECTIONS:
            shown.progress = presentations.progress_lines(
                [comparison], progress_read([comparison], level=level)
            )
    return shown
