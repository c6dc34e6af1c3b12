"""The section of a workload's presentation on the Compare and Experiment pages: its tables
(compare.presentations) and the figures that go with them (dashboard.charts), as page context.
The Compare page has them read with the rest of its comparison (compare.selectors.
comparison_show) and only draws them here (presentation_section)."""

from typing import Any

from benchhub.compare.presentations import Progress, presentation_tables, progress_lines
from benchhub.compare.selectors import Comparison, presentation_read, progress_read
from benchhub.compare.tables import captions
from benchhub.dashboard import charts
from benchhub.workloads.models import Workload


def presentation_context(
    comparisons: list[Comparison], *, level: int | None = None, sweep_charts: bool = False
) -> dict[str, Any]:
    """The tables of the comparisons' presentation and its figures: {"tables", "figures":
    [{"id", "title", "captions"}], "figure_data": {id: plotly figure}}. A sweep has charts
    only when `sweep_charts` (the Compare page draws its own)."""
    tables = presentation_tables(comparisons, presentation_read(comparisons))
    progress: list[Progress] = []
    if tables["presentation"] == Workload.Presentation.CONNECTIONS:
        progress = progress_lines(comparisons, progress_read(comparisons, level=level))
    return presentation_section(
        comparisons, tables=tables, progress=progress, sweep_charts=sweep_charts
    )


def presentation_section(
    comparisons: list[Comparison],
    *,
    tables: dict[str, Any],
    progress: list[Progress],
    sweep_charts: bool = False,
) -> dict[str, Any]:
    """presentation_context's section from tables and progress lines already read
    (compare.selectors.comparison_show): draws the figures, reads nothing."""
    figures: list[dict[str, Any]] = []
    data: dict[str, Any] = {}

    def add(prefix: str, comparison: Comparison, title: str, figure: dict, note: str) -> None:
        element = f"{prefix}-{len(figures) + 1}"
        figures.append({"id": element, "title": title, "captions": [*captions(comparison), note]})
        data[element] = figure

    kind = tables["presentation"]
    if kind == Workload.Presentation.SWEEP and sweep_charts:
        for comparison in comparisons:
            title = f"tps: {comparison.series[0].run.workload.name}"
            add(
                "tps",
                comparison,
                title,
                charts.tps_figure(comparison, title=title),
                "Points: median tps of the valid repeats; bars: min to max.",
            )
    if kind == Workload.Presentation.CONNECTIONS:
        by_name = {c.series[0].run.workload.name: c for c in comparisons}
        for line in progress:
            title = f"progress: {line.workload}, {line.clients} measured clients"
            add(
                "progress",
                by_name[line.workload],
                title,
                charts.progress_figure(line, title=title),
                "tps of each -P interval in the repeat whose tps is the level's median "
                "(the lower middle one for an even number of repeats); "
                "choose the level with &level=n.",
            )
    return {"tables": tables, "figures": figures, "figure_data": data}
