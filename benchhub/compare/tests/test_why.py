"""The why section's reads (compare.why): the level chosen, the sides, two queries."""

from benchhub.compare.assessment import comparison_assess
from benchhub.compare.selectors import comparison_get
from benchhub.compare.tests.uploads import upload, upload_evidence
from benchhub.compare.why import why_get

FOLDED = "postgres;PostgresMain;exec_simple_query 10\n"


def _why():
    comparison = comparison_get(workload="select-only", host="bench-01", versions=["13.3", "15.4"])
    return comparison, comparison_assess(comparison)


def test_it_picks_the_trusted_level_furthest_from_a_ratio_of_1(agent):
    upload(agent, version="13.3", tps={1: [100, 101, 99], 4: [100, 101, 99], 8: [100, 101, 99]})
    upload(agent, version="15.4", tps={1: [80, 81, 79], 4: [130, 131, 129], 8: [110, 111, 109]})
    comparison, assessment = _why()

    why = why_get(comparison, assessment)

    assert why is not None and why.clients == 4  # +30% beats -20% and +10%
    assert "15.4 faster" in why.reason
    asked = why_get(comparison, assessment, asked=8)
    assert asked is not None and asked.clients == 8
    unknown = why_get(comparison, assessment, asked=3)  # not a compared level: the default
    assert unknown is not None and unknown.clients == 4


def test_it_reads_each_version_side_in_two_queries(agent, django_assert_num_queries):
    waits = {"CPU": 1.0}
    for version in ("13.3", "15.4"):
        upload_evidence(
            agent,
            version=version,
            tps={1: [100, 90], 2: [150, 160]},
            waits=waits,
            folded=FOLDED,
            p99=3,
        )
    comparison, assessment = _why()

    with django_assert_num_queries(2):
        why = why_get(comparison, assessment, asked=2)

    assert why is not None
    assert [side.series.label for side in why.sides] == ["13.3", "15.4"]
    assert [side.level.evidence_repeats for side in why.sides] == [[1, 2], [1, 2]]
    assert why.sides[0].level.profile is not None and why.sides[0].level.profile_repeat == 1
    assert why.profiled_levels == [1, 2]
    run_id = why.sides[1].series.run.id
    assert why.percentiles[run_id][1]["p99_ms"] == 3
