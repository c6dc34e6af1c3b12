"""Generated requests over every operation of /api/schema/: no 5xx, and every 4xx in the error
shape ({"error", "detail", "fields"}) with a sentence in "detail".

Schemathesis reads the schema the server serves and drives the WSGI application in this process.
People's operations go out with alice's personal token, the agent's operations with a runner
token; about half the generated path ids are swapped for ids of rows that exist, so the requests
reach past the 404 into validation and the services.
"""

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from benchhub.accounts.services import personal_token_create
from benchhub.hosts.services import runner_token_create
from benchhub.jobs.services import job_create
from benchhub.testing.payloads import run_payload
from benchhub.wsgi import application

# Per operation (fewer where the inputs run out); 33 operations make about 1,200 requests in
# about 20 s, so the quick pass stays in `make test`. The thorough pass (slow suite) sends at
# least 5,000.
EXAMPLES = 40
MINIMUM_REQUESTS = 1000
THOROUGH_EXAMPLES = 160
THOROUGH_MINIMUM_REQUESTS = 5000
AGENT_PATHS = ("/api/v1/jobs/claim/", "/heartbeat/", "/finish/", "/release/")

JOB = {
    "versions": ["15"],
    "workload": {"name": "select-only", "builtin": "select-only", "scripts": [], "setup": []},
    "scale": 1,
    "clients": [1],
    "duration_s": 2.0,
    "repeats": 1,
}


def error_problem(response) -> str | None:
    """What is wrong with a response, or None: a 5xx, or a 4xx not in the API's error shape."""
    status = response.status_code
    if status >= 500:
        return f"server error {status}: {response.text[:500]}"
    if status < 400:
        return None
    try:
        body = json.loads(response.text)
    except ValueError:
        return f"{status} without a JSON body: {response.text[:200]!r}"
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        return f"{status} without an error code: {body!r:.300}"
    if not isinstance(body.get("detail"), str) or not body["detail"].strip():
        return f"{status} without a detail sentence: {body!r:.300}"
    if "fields" in body and not isinstance(body["fields"], dict):
        return f"{status} with fields that are not an object: {body!r:.300}"
    return None


@pytest.fixture
def known(transactional_db, alice):
    """Rows for path parameters to point at, and the two kinds of token."""
    _, personal = personal_token_create(user=alice, name="schemathesis")
    # The token DELETE /tokens/{prefix}/ may revoke: not the one the requests carry.
    spare, _ = personal_token_create(user=alice, name="spare")
    _, runner = runner_token_create(host_name="bench-01")
    payload = run_payload()
    job = job_create(actor="test", **JOB)
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {runner}")
    assert client.post("/api/v1/runs/", payload, format="json").status_code == 201
    return {
        "personal": personal,
        "runner": runner,
        "path": {
            "job_id": job.pk,
            "run_uuid": payload["run_uuid"],
            "schedule_id": 1,
            "entry_id": "select-only",
            "name": "baseline",
            "prefix": spare.prefix,
        },
    }


def exercise(
    operation, *, token: str, known_ids: dict, problems: list[str], examples: int = EXAMPLES
) -> int:
    """Send `examples` generated requests to one operation; returns how many went out."""
    sent = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(), use_known=st.booleans())
    def send(case, use_known):
        nonlocal sent
        if use_known and case.path_parameters:
            for name in case.path_parameters:
                if name in known_ids:
                    case.path_parameters[name] = known_ids[name]
        response = case.call(headers={"Authorization": f"Bearer {token}"})
        sent += 1
        problem = error_problem(response)
        if problem:
            problems.append(f"{case.method} {case.formatted_path}: {problem}")

    send()
    return sent


def exercise_all(known: dict, *, examples: int) -> tuple[int, list[str]]:
    """Every operation of the served schema, `examples` cases each: (requests sent, problems)."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30, [op.label for op in operations]
    problems: list[str] = []
    sent = 0
    for operation in operations:
        agent = any(part in operation.path for part in AGENT_PATHS)
        token = known["runner"] if agent else known["personal"]
        sent += exercise(
            operation,
            token=token,
            known_ids=known["path"],
            problems=problems,
            examples=examples,
        )
    print(f"{sent} requests over {len(operations)} operations")
    return sent, problems


def test_it_answers_every_generated_request_without_5xx_and_in_the_error_shape(known):
    sent, problems = exercise_all(known, examples=EXAMPLES)
    assert sent >= MINIMUM_REQUESTS
    assert not problems, "\n".join(sorted(set(problems))[:40])


@pytest.mark.slow
def test_it_answers_5000_generated_requests_without_5xx(known):
    """What only this test proves: at least 5,000 generated cases over every operation, 160
    examples an operation against the fast suite's 40, so inputs hypothesis reaches only with
    more examples, get no 5xx and every 4xx the error shape."""
    sent, problems = exercise_all(known, examples=THOROUGH_EXAMPLES)
    assert sent >= THOROUGH_MINIMUM_REQUESTS
    assert not problems, "\n".join(sorted(set(problems))[:40])
