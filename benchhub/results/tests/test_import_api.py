"""The import API: pgbench outputs as pasted, and published tables as published.

Where the text lacks a field a run needs, the answer is a 400 `incomplete` naming each missing
field with what was read, and nothing is stored; sending again with those fields stores the run.
"""

import pytest
from rest_framework.test import APIClient

from benchhub.results.models import Result, Run
from benchhub.testing.processes import ROOT

FIXTURES = ROOT / "runners" / "tests" / "fixtures"
PASTED = FIXTURES / "pasted"
TABLE = (
    "| 模型 | 连接数 | PG 13 tps | PG 14 tps | 14性能提升比率 |\n"
    "|---|---|---|---|---|\n"
    "| 只读 1亿 -c 52 -j 52 -T 120 | 52 | 1234936 | 1582846 | 28.2% |\n"
)


@pytest.fixture
def api(bob):
    client = APIClient()
    client.force_authenticate(bob)
    return client


def _outputs(api, **body):
    return api.post("/api/v1/imports/outputs/", {"host": "old-box", **body}, format="json")


def _summary(api, **body):
    body = {"host": "paper", "builtin": "select-only", "table": TABLE, **body}
    return api.post("/api/v1/imports/summary/", body, format="json")


def test_it_imports_an_output_pasted_as_an_indented_code_block_with_prose(api, bob):
    text = (PASTED / "indented-4-prose-pg15-select-only-P1-r-T3.txt").read_text()
    response = _outputs(api, outputs=[{"text": text, "name": "issue 12"}], note="issue 12")
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    # The version comes from the banner; the run says it was imported, by whom, from what.
    assert (run.source, run.build.version, run.submitted_by, run.notes) == (
        "import",
        "15.20",
        bob,
        "issue 12",
    )
    assert run.import_text == text
    result = Result.objects.get(run=run)
    assert (result.clients, result.tps, result.raw_output) == (2, 51755.494899, text)
    assert response.json()["source"] == "import"


@pytest.mark.parametrize(
    "name",
    [
        "joined-pg15-tpcb-like-t50.txt",
        "fenced-quoted-pg13-multi-builtin-rate.txt",
        "indented-tab-pg96-tpcb-P1-r.txt",
        "cut-header-command-pg15-select-only-P1-r-T3.txt",
        "numbered-dot-cut-command-pg15-select-only-P1-r-T3.txt",
        "numbered-bar-pg96-tpcb-P1-r.txt",
        "numbered-editor-cut-pg13-partitioned-P1-r.txt",
    ],
)
def test_it_imports_each_refused_shape_that_holds_what_a_run_needs(api, name):
    source = (PASTED / name).read_text()
    response = _outputs(api, version="15.4", outputs=[{"text": source}])
    assert response.status_code == 201, response.json()
    assert Result.objects.get().tps > 0


def test_it_imports_the_numbered_logs_of_a_post_with_their_published_figures(api):
    name = "numbered-dot-e2-pg14beta1-select-only-M-prepared-c128-P2-constructed.txt"
    text = (PASTED / name).read_text()
    response = _outputs(api, outputs=[{"text": text, "name": "post"}])
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert (run.build.version, run.clients, run.import_text) == ("14beta1", [128], text)
    result = Result.objects.get(run=run)
    assert (result.tps, result.raw_output) == (600621.462871, text)


def test_it_asks_for_what_a_tail_fragment_lacks_and_stores_nothing(api):
    text = (PASTED / "tail-6-pg15-select-only-P1-r-T3.txt").read_text()
    response = _outputs(api, outputs=[{"text": text, "name": "tail"}])
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "incomplete"
    assert set(body["fields"]) == {"outputs[0].clients", "version"}
    assert "tail does not say its number of clients" in body["fields"]["outputs[0].clients"][0]
    read = body["read"]["outputs"][0]
    assert (read["name"], read["tps"], read["clients"]) == ("tail", 51755.494899, None)
    assert Run.objects.count() == 0
    # The statements say what the workload is: only clients and version are asked for.
    response = _outputs(api, version="15.4", outputs=[{"text": text, "clients": 2}])
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert (run.build.version, run.clients) == ("15.4", [2])


def test_it_asks_for_the_workload_when_no_line_says_it(api):
    text = (PASTED / "tail-4-pg92-tpcb-c2-t50.txt").read_text()
    response = _outputs(api, outputs=[{"text": text, "clients": 2}])
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"version", "workload"}
    response = _outputs(
        api, version="9.2.24", workload="tpcb-like", outputs=[{"text": text, "clients": 2}]
    )
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert (run.workload.name, run.workload.builtin, run.clients) == ("tpcb-like", "tpcb-like", [2])
    assert Result.objects.get().tps == 1644.412287


def test_it_names_each_output_missing_its_clients_by_index(api):
    whole = (FIXTURES / "pgbench" / "pg15-select-only-P1-r-T3.txt").read_text()
    tail = (PASTED / "tail-6-pg15-select-only-P1-r-T3.txt").read_text()
    response = _outputs(api, outputs=[{"text": whole}, {"text": tail}, {"text": tail}])
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"outputs[1].clients", "outputs[2].clients"}
    response = _outputs(
        api, outputs=[{"text": whole}, {"text": tail, "clients": 2}, {"text": tail, "clients": 4}]
    )
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert (run.clients, run.repeats, run.build.version) == ([2, 4], 2, "15.20")


def test_it_still_refuses_text_that_is_not_pgbench_output(api):
    response = _outputs(api, version="15", outputs=[{"text": "hello world", "name": "notes"}])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert "notes: not pgbench run output" in response.json()["fields"]["outputs"][0]
    assert Run.objects.count() == 0


def test_it_asks_which_columns_of_a_published_table_to_import(api):
    response = _summary(api)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "incomplete"
    assert set(body["fields"]) == {"clients_column", "columns"}
    assert body["read"]["headers"] == ["模型", "连接数", "PG 13 tps", "PG 14 tps", "14性能提升比率"]
    assert body["read"]["rows"][0][1] == "52"
    # The guess skips the label and the ratio column.
    assert body["read"]["guess"] == {
        "clients_column": 1,
        "columns": [{"column": 2, "version": "13"}, {"column": 3, "version": "14"}],
    }
    assert Run.objects.count() == 0


def test_it_imports_the_published_table_as_13_against_14_at_52_clients(api, bob):
    response = _summary(
        api,
        clients_column="连接数",
        columns=[{"column": "PG 13 tps"}, {"column": 3, "version": "14"}],
        duration_s=120,
        note="a blog post",
    )
    assert response.status_code == 201, response.json()
    runs = {r.build.version: r for r in Run.objects.all()}
    assert set(runs) == {"13", "14"}
    assert dict(runs["13"].results.values_list("clients", "tps")) == {52: 1234936}
    assert dict(runs["14"].results.values_list("clients", "tps")) == {52: 1582846}
    assert runs["13"].comparability_key == runs["14"].comparability_key
    for run in runs.values():
        assert (run.source, run.import_text, run.submitted_by) == ("summary", TABLE, bob)
    assert [r["version"] for r in response.json()] == ["13", "14"]


def test_it_reads_thousands_separators_units_and_tab_separated_tables(api):
    table = "clients\tPG 13.3 (tps)\tPG 14beta1 (tps)\n64\t91,000 tps\t95 500\n128\t88.5k\t—\n"
    response = _summary(api, table=table, clients_column=0, columns=[{"column": 1}, {"column": 2}])
    assert response.status_code == 201, response.json()
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["13.3"].results.values_list("clients", "tps")) == {64: 91000, 128: 88500}
    assert dict(runs["14beta1"].results.values_list("clients", "tps")) == {64: 95500}


@pytest.mark.parametrize(
    ("columns", "field"),
    [
        ([{"column": "PG 15 tps"}], "columns[0].column"),
        ([{"column": 9}], "columns[0].column"),
        ([{"column": 0, "version": "13"}], "table"),  # the label column: no numbers
        ([{"column": 0}], "columns[0].version"),  # nor a version in its header
        ([{"column": "PG 13 tps"}, {"column": 3, "version": "13"}], "columns"),
    ],
)
def test_it_names_a_bad_column_choice_and_stores_nothing(api, columns, field):
    response = _summary(api, clients_column=1, columns=columns)
    assert response.status_code == 400, response.json()
    assert field in response.json()["fields"]
    assert Run.objects.count() == 0


def test_it_refuses_a_client_level_given_twice_naming_the_line(api):
    table = "clients 13.3\n52 100\n64 110\n52 120\n"
    response = _summary(api, table=table)
    assert response.status_code == 400
    assert "Line 4 repeats clients 52 of line 2" in response.json()["fields"]["table"][0]
    assert Run.objects.count() == 0


def test_it_imports_one_model_of_a_table_that_mixes_them(api):
    table = TABLE + "| TPC-B 1亿 -c 52 -j 52 -T 120 | 52 | 100 | 120 | 20% |\n"
    response = _summary(api, table=table)
    assert response.status_code == 400
    body = response.json()
    assert set(body["fields"]) == {"filter"}
    assert body["read"]["filter"] == {"column": 0, "header": "模型", "values": ["只读", "TPC-B"]}
    assert body["read"]["guess"]["clients_column"] == 1
    assert Run.objects.count() == 0
    # With a model, the columns are still to be chosen; with both, one run per version.
    response = _summary(api, table=table, filter="TPC-B")
    assert set(response.json()["fields"]) == {"clients_column", "columns"}
    response = _summary(
        api, table=table, filter="TPC-B", clients_column=1, columns=[{"column": 2}, {"column": 3}]
    )
    assert response.status_code == 201, response.json()
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["13"].results.values_list("clients", "tps")) == {52: 100}
    assert dict(runs["14"].results.values_list("clients", "tps")) == {52: 120}
    response = _summary(api, table=table, filter="OLTP", clients_column=1, columns=[{"column": 2}])
    assert response.status_code == 400
    assert "its values are 只读, TPC-B" in response.json()["fields"]["filter"][0]


def test_it_refuses_a_filter_for_a_table_without_labels_to_choose(api):
    response = _summary(api, table="clients 13.3 14beta1\n64 91000 95500\n", filter="x")
    assert response.status_code == 400
    assert "filter" in response.json()["fields"]


def test_it_imports_a_page_of_sections_with_the_published_figures(api, bob):
    page = (
        "### 9.5\n\n并发数 , TPS\n```\n16 , 123456\n32 , 200,100\n```\n\n"
        "### 9.6\n```\n并发数 , TPS\n16 , 133456\n64 , 250000\n```\n"
    )
    response = _summary(api, table=page)
    assert response.status_code == 201, response.json()
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["9.5"].results.values_list("clients", "tps")) == {16: 123456, 32: 200100}
    assert dict(runs["9.6"].results.values_list("clients", "tps")) == {16: 133456, 64: 250000}
    assert {r.import_text for r in runs.values()} == {page}


def test_it_imports_the_plain_table_form_without_a_choice(api):
    response = _summary(api, table="clients 13.3 14beta1\n64 91000 95500\n")
    assert response.status_code == 201, response.json()
    assert Run.objects.count() == 2
