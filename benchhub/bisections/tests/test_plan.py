"""A bisection's measurement fields come from the plan (benchhub_runner.jobspec.plan): the ones it
has a column of, as its request, its answer and the jobs it queues carry them."""

from benchhub_runner.jobspec import plan

from benchhub.bisections.models import BISECTION_PLAN_FIELDS
from benchhub.bisections.serializers import (
    JOB_FIELDS,
    BisectionInSerializer,
    BisectionOutSerializer,
)


def test_it_stores_the_plan_fields_it_has_a_column_of_but_its_own_clients_and_repeats():
    assert BISECTION_PLAN_FIELDS == ("scale", "duration_s", "warmup_s", "config_overrides")
    assert set(BISECTION_PLAN_FIELDS) <= set(plan.PLAN_FIELDS)


def test_it_takes_and_answers_each_of_them():
    fields = BisectionInSerializer().fields
    assert set(BISECTION_PLAN_FIELDS) <= set(fields) and set(BISECTION_PLAN_FIELDS) <= set(
        JOB_FIELDS
    )
    assert fields["warmup_s"].help_text == plan.PLAN_SPECS["warmup_s"].help
    # A bisection's own: one level, and repeats per step with its own bounds.
    bounds = (
        getattr(fields["clients"], "max_value", None),
        getattr(fields["repeats"], "min_value", None),
    )
    assert bounds == (100000, 2)
    assert set(BISECTION_PLAN_FIELDS) <= set(BisectionOutSerializer.Meta.fields)
