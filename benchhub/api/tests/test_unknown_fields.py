"""Every request body refuses a key it does not know, at any depth, naming it by its path; the
same body without the stray key is accepted, so the key alone is what was refused."""

import copy
from typing import Any

import pytest
from rest_framework.test import APIClient

from benchhub.bisections.tests.conftest import REQUEST as BISECTION
from benchhub.builds.tests.test_recipes import RECIPE
from benchhub.jobs.models import Job
from benchhub.jobs.tests.test_queue import JOB
from benchhub.results.tests.test_import_api import TABLE
from benchhub.testing.payloads import run_payload


@pytest.fixture
def alice_client(alice) -> APIClient:
    client = APIClient()
    client.force_authenticate(alice)
    return client


def _with(body: dict[str, Any], path: tuple[str | int, ...], value: Any = 1) -> dict[str, Any]:
    """A deep copy of `body` with `value` set at `path` (keys and list indexes)."""
    changed = copy.deepcopy(body)
    inner: Any = changed
    for step in path[:-1]:
        inner = inner[step]
    inner[path[-1]] = value
    return changed


def _refused(client: APIClient, url: str, body: dict[str, Any], field: str) -> str:
    response = client.post(url, body, format="json")
    assert response.status_code == 400, response.content
    fields = response.json()["fields"]
    assert field in fields, fields
    return fields[field][0]


SCHEDULE = {"name": "nightly", "crontab": "0 2 * * *", "template": JOB}
SUMMARY = {
    "host": "paper",
    "builtin": "select-only",
    "table": TABLE,
    "clients_column": 1,
    "columns": [{"column": 2}, {"column": 3}],
}


def test_it_refuses_query_mode_beside_the_workload_and_says_where_it_belongs(alice_client):
    stray = {**{k: v for k, v in JOB.items() if k != "workload"}, "query_mode": "prepared"}
    stray["workload"] = {"name": "select-only", "builtin": "select-only"}
    message = _refused(alice_client, "/api/v1/jobs/", stray, "query_mode")
    assert "workload.query_mode" in message
    assert Job.objects.count() == 0
    assert alice_client.post("/api/v1/jobs/", JOB, format="json").status_code == 201


@pytest.mark.parametrize(
    ("url", "body", "path", "named"),
    [
        ("/api/v1/jobs/", JOB, ("repeets",), "repeets"),
        ("/api/v1/jobs/", JOB, ("workload", "querymode"), "workload.querymode"),
        ("/api/v1/schedules/", SCHEDULE, ("enabeld",), "enabeld"),
        ("/api/v1/schedules/", SCHEDULE, ("template", "workload", "x"), "template.workload.x"),
        ("/api/v1/recipes/", RECIPE, ("patchs",), "patchs"),
        ("/api/v1/tokens/", {"name": "laptop"}, ("scope",), "scope"),
        ("/api/v1/regressions/subscriptions/", {"host": "bench-01"}, ("hots",), "hots"),
        ("/api/v1/imports/summary/", SUMMARY, ("versions",), "versions"),
        ("/api/v1/imports/summary/", SUMMARY, ("columns", 1, "name"), "columns[1].name"),
    ],
)
def test_each_body_names_the_unknown_field_and_takes_the_body_without_it(
    alice_client, agent, url, body, path, named
):
    message = _refused(alice_client, url, _with(body, path), named)
    assert message.startswith("Unknown field")
    accepted = alice_client.post(url, body, format="json")
    assert accepted.status_code == 201, accepted.content


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (("tpss",), "tpss"),
        (("host", "facts", "coress"), "host.facts.coress"),
        (("results", 2, "tpss"), "results[2].tpss"),
        (("results", 0, "streams"), None),  # a known field: no refusal of its own
        (("workload", "query_modes"), "workload.query_modes"),
        (("configuration", "setting"), "configuration.setting"),
        (("build", "commmit"), "build.commmit"),
    ],
)
def test_an_upload_names_an_unknown_field_at_any_depth(agent, path, named):
    payload = run_payload()
    response = agent.client.post("/api/v1/runs/", _with(payload, path, []), format="json")
    if named is None:
        assert response.status_code == 201, response.content
        return
    assert response.status_code == 400, response.content
    assert list(response.json()["fields"]) == [named]
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201


def test_an_unknown_field_is_named_beside_the_other_errors(agent):
    payload = _with(_with(run_payload(), ("results", 0, "tps"), "fast"), ("results", 0, "tpss"))
    fields = agent.client.post("/api/v1/runs/", payload, format="json").json()["fields"]
    assert set(fields) == {"results[0].tps", "results[0].tpss"}


def test_a_bisection_names_an_unknown_field(alice_client):
    _refused(alice_client, "/api/v1/bisections/", _with(BISECTION, ("goood",), "abc"), "goood")


def test_free_form_values_keep_their_keys(agent):
    """Host extra and workload params are free-form: their keys are data, not fields."""
    payload = _with(run_payload(), ("host", "extra"), {"anything": {"nested": 1}})
    assert agent.client.post("/api/v1/runs/", payload, format="json").status_code == 201
