"""The one read of what a comparison shows (selectors.comparison_show), which the Compare page
and the compare API both make."""

import pytest

from benchhub.compare.selectors import ComparisonError, comparison_show
from benchhub.compare.tests.uploads import upload
from benchhub.compare.why import why_data

SELECTION = {"workload": "select-only", "host": "bench-01", "versions": ["13.3", "15.4"]}


def test_it_reads_the_runs_verdicts_rows_and_presentation(agent):
    upload(agent, version="13.3", tps={1: [100, 101, 99], 4: [100, 101, 99]})
    upload(agent, version="15.4", tps={1: [130, 131, 129], 4: [100, 102, 98]})

    shown = comparison_show(selection=SELECTION, threshold=0.02)

    assert [s.label for s in shown.comparison.series] == ["13.3", "15.4"]
    assert [row.clients for row in shown.rows] == [1, 4]
    assert shown.rows[0].cells[1].verdict.verdict.verdict == "faster"
    assert shown.rows[0].cells[1].verdict.description.startswith("Ratio of mean tps 1.300")
    (version,) = shown.assessment.versions
    assert version.summary.startswith("15.4 against 13.3: faster at 1")
    assert [s.peak_clients for s in shown.summary] == [1, 1]
    assert shown.verdict_lines == [(version, [])]
    assert shown.pooled_hosts == ["bench-01"]
    assert shown.presentation == {"presentation": "sweep"}
    assert shown.progress == []  # only the page asks for a connections presentation's progress


def test_it_reads_the_why_section_for_the_page_and_the_api_alike(agent):
    upload(agent, version="13.3", tps={1: [100, 101, 99], 4: [100, 101, 99]})
    upload(agent, version="15.4", tps={1: [130, 131, 129], 4: [100, 102, 98]})

    chosen = comparison_show(selection=SELECTION, threshold=0.02)
    asked = comparison_show(selection=SELECTION, threshold=0.02, why=4)
    page = comparison_show(selection=SELECTION, threshold=0.02, page=True, why=4)

    assert chosen.why is not None and chosen.why.clients == 1
    assert asked.why is not None and asked.why.clients == 4
    assert why_data(page.why) == why_data(asked.why)


def test_it_shows_an_empty_comparison_as_a_sweep_with_nothing_in_it(agent):
    upload(agent, version="13.3", tps={1: [100]})

    shown = comparison_show(selection={**SELECTION, "versions": ["9.6"]}, threshold=0.02, page=True)

    assert shown.comparison.series == [] and shown.comparison.missing == ["9.6"]
    assert shown.rows == [] and shown.why is None
    assert shown.presentation == {"presentation": "sweep"}


def test_it_refuses_what_comparison_get_refuses(agent):
    with pytest.raises(ComparisonError) as refused:
        comparison_show(selection={**SELECTION, "host": "nowhere"}, threshold=0.02)
    assert refused.value.fields == {"host": ["No host named 'nowhere'."]}
