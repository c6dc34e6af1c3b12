"""Importing history from the web: pgbench outputs (pasted or uploaded) and published tables."""

from django.core.files.uploadedfile import SimpleUploadedFile

from benchhub.results.models import Result, Run
from benchhub.testing.processes import ROOT

FIXTURES = ROOT / "runners" / "tests" / "fixtures" / "pgbench"
SELECT_ONLY = (FIXTURES / "pg15-select-only-P1-r-T3.txt").read_text()
LSCPU = "Model name: Intel(R) Xeon(R) Gold 6230\nSocket(s): 2\nCore(s) per socket: 20\n"


def test_it_makes_one_run_of_pasted_and_uploaded_outputs(client, bob):
    client.force_login(bob)
    upload = SimpleUploadedFile("c1.txt", SELECT_ONLY.encode())
    response = client.post(
        "/import/",
        {
            "version": "15.4",
            "host": "old-box",
            "files": [upload],
            "pasted": f"{SELECT_ONLY}\n---\n{SELECT_ONLY}",
            "config": "shared_buffers = '1GB'  # x",
            "lscpu": LSCPU,
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302 and response.url == f"/runs/{run.uuid}/"
    assert (run.source, run.build.version, run.repeats, run.submitted_by) == (
        "import",
        "15.4",
        3,
        bob,
    )
    assert run.config.settings == {"shared_buffers": "1GB"}
    assert (run.host_facts.cpu_model, run.host_facts.cores) == ("Intel(R) Xeon(R) Gold 6230", 40)
    assert Result.objects.filter(run=run).count() == 3
    page = client.get(response.url).content.decode()
    assert "Imported from pgbench output" in page and "Xeon(R) Gold 6230" in page


def test_it_names_text_that_is_not_pgbench_output_and_stores_nothing(client, bob):
    client.force_login(bob)
    page = client.post(
        "/import/",
        {"version": "15.4", "host": "old-box", "pasted": f"{SELECT_ONLY}\n---\nhello world"},
    )
    assert page.status_code == 200
    assert "pasted output 2" in page.content.decode()
    assert Run.objects.count() == 0


def test_it_makes_summary_runs_marked_as_such_of_a_published_table(client, bob):
    client.force_login(bob)
    table = "clients 13.3 14beta1\n64 91000 95500\n128 88000 101000\n256 - 99000\n"
    response = client.post(
        "/import/summary/",
        {
            "host": "paper-xeon-4210r",
            "cpu_model": "Xeon Silver 4210R",
            "cores": "20",
            "memory_gb": "256",
            "builtin": "select-only",
            "scale": "200",
            "duration_s": "30",
            "table": table,
            "note": "blog post, 2021-05",
        },
    )
    assert response.status_code == 302
    runs = {r.build.version: r for r in Run.objects.all()}
    assert set(runs) == {"13.3", "14beta1"}
    assert all(r.source == "summary" for r in runs.values())
    assert dict(runs["13.3"].results.values_list("clients", "tps")) == {64: 91000, 128: 88000}
    assert runs["14beta1"].clients == [64, 128, 256]
    assert runs["13.3"].comparability_key == runs["14beta1"].comparability_key
    page = client.get(response.url).content.decode()
    assert "Summary import: no raw output" in page and "blog post, 2021-05" in page
    assert "summary, no raw output" in client.get("/").content.decode()


def test_it_names_a_bad_table_row_and_stores_nothing(client, bob):
    client.force_login(bob)
    page = client.post(
        "/import/summary/",
        {"host": "p", "builtin": "select-only", "table": "clients 13 14\n64 100 fast\n"},
    )
    assert "Line 2 is not numbers" in page.content.decode()
    assert Run.objects.count() == 0


def test_it_needs_sign_in_to_import(client, db):
    assert client.get("/import/").status_code == 302
    assert client.get("/import/summary/").status_code == 302


PASTED = ROOT / "runners" / "tests" / "fixtures" / "pasted"
TAIL = (PASTED / "tail-6-pg15-select-only-P1-r-T3.txt").read_text()
TABLE = (
    "模型 | 连接数 | PG 13 tps | PG 14 tps | 14性能提升比率\n"
    "只读 1亿 -c 52 -j 52 -T 120 | 52 | 1234936 | 1582846 | 28.2%\n"
)


def test_it_asks_for_exactly_what_a_pasted_fragment_lacks(client, bob):
    client.force_login(bob)
    page = client.post("/import/", {"host": "old-box", "pasted": TAIL}).content.decode()
    assert 'id="asked"' in page
    assert 'name="clients_0"' in page and 'name="version"' in page
    assert 'name="workload"' not in page  # the statements say what ran
    assert "pasted output 1 does not say its number of clients" in page
    assert "it says: tps 51755.5" in page
    assert Run.objects.count() == 0
    response = client.post(
        "/import/", {"host": "old-box", "pasted": TAIL, "clients_0": "2", "version": "15.4"}
    )
    run = Run.objects.get()
    assert response.status_code == 302 and response.url == f"/runs/{run.uuid}/"
    assert (run.clients, run.build.version, run.import_text) == ([2], "15.4", TAIL.strip("\n"))
    page = client.get(response.url).content.decode()
    assert "not measured by a BenchHub agent" in page and 'id="import-text"' in page


def test_it_moves_uploaded_files_to_the_paste_box_when_it_asks(client, bob):
    client.force_login(bob)
    upload = SimpleUploadedFile("tail.txt", TAIL.encode())
    page = client.post("/import/", {"host": "b", "version": "15", "files": [upload]})
    text = page.content.decode()
    assert "now in the paste box" in text and "51755.494899" in text
    assert 'name="clients_0"' in text


def test_it_shows_the_columns_of_a_published_table_and_imports_the_picked_ones(client, bob):
    client.force_login(bob)
    form = {"host": "blog", "builtin": "select-only", "scale": "10", "duration_s": "120"}
    form["table"] = TABLE
    page = client.post("/import/summary/", form).content.decode()
    assert 'id="columns"' in page and "连接数" in page and "14性能提升比率" in page
    assert 'name="version_2" value="13"' in page and 'name="version_4" value=""' in page
    assert Run.objects.count() == 0
    picked = {**form, "columns_shown": "1", "clients_column": "1", "version_2": "13"}
    response = client.post("/import/summary/", {**picked, "version_3": "14"})
    assert response.status_code == 302
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["14"].results.values_list("clients", "tps")) == {52: 1582846}
    page = client.get(f"/runs/{runs['13'].uuid}/").content.decode()
    # A builtin with its scale and duration: the definition is known, so it can be queued again.
    assert "Queue this again" in page and "连接数" in page
    queued = client.post(f"/runs/{runs['13'].uuid}/requeue/")
    assert queued.status_code == 302 and queued.url.startswith("/jobs/"), queued.url


def test_it_offers_no_rerun_of_a_summary_whose_workload_was_not_published(client, bob):
    client.force_login(bob)
    table = "clients 13 14\n8 100 110\n"
    response = client.post(
        "/import/summary/", {"host": "p", "workload_name": "their-script", "table": table}
    )
    page = client.get(response.url).content.decode()
    assert "Queue this again" not in page and 'id="no-rerun"' in page


def test_it_makes_one_level_per_run_of_a_page_pasted_without_separators(client, bob):
    client.force_login(bob)
    one = (ROOT / "runners/tests/fixtures/pasted/cut-header-pg18-tpcb-like-t50.txt").read_text()
    page = (
        f"$ pgbench -c 1 -j 1 -t 50 bench\n{one}\nand with 4 clients:\n$ pgbench -c 4 -t 50\n{one}"
    )
    response = client.post(
        "/import/", {"host": "wiki", "version": "18.1", "workload": "tpcb-like", "pasted": page}
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert (run.clients, run.workload.name) == ([1, 4], "tpcb-like")


def test_it_imports_a_post_whose_code_blocks_number_their_lines(client, bob):
    """The post's blocks as the blog renders them (`  1. [pg14@pg01 ~]$ pgbench ...`, `...` where
    the author cut progress lines), one block per client level, pasted as they are."""
    client.force_login(bob)
    base = ROOT / "runners/tests/fixtures/pasted"
    block = base / "numbered-dot-e2-pg14beta1-select-only-M-prepared-c128-P2-constructed.txt"
    text = block.read_text()
    at_64 = text.replace("-c 128", "-c 64").replace(
        "number of clients: 128", "number of clients: 64"
    )
    response = client.post("/import/", {"host": "xeon-4210r", "pasted": f"{at_64}\n{text}"})
    assert response.status_code == 302, response.content.decode()[:2000]
    run = Run.objects.get()
    assert (run.build.version, run.clients, run.workload.name) == (
        "14beta1",
        [64, 128],
        "select-only",
    )
    assert list(run.results.values_list("tps", flat=True)) == [600621.462871] * 2
    # The run keeps the text as pasted, numbers and all.
    assert run.import_text.count("1. [pg14@pg01 ~]$ pgbench") == 2


def test_it_asks_which_model_of_a_mixed_table_and_imports_the_picked_one(client, bob):
    client.force_login(bob)
    table = (
        "| 模型 | 连接数 | PG 13 tps | PG 14 tps |\n|---|---|---|---|\n"
        "| 只读 1亿 -c 52 | 52 | 1234936 | 1582846 |\n| 读写 1亿 -c 52 | 52 | 100 | 120 |\n"
    )
    form = {"host": "paper", "builtin": "select-only", "table": table}
    page = client.post("/import/summary/", form).content.decode()
    assert '<option value="只读">' in page and '<option value="读写">' in page
    assert Run.objects.count() == 0
    picked = {**form, "columns_shown": "1", "filter": "只读", "clients_column": "1"}
    response = client.post("/import/summary/", {**picked, "version_2": "13", "version_3": "14"})
    assert response.status_code == 302
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["14"].results.values_list("clients", "tps")) == {52: 1582846}


def test_it_imports_a_page_of_sections_one_per_version_as_published(client, bob):
    client.force_login(bob)
    page = (
        "### 9.5\n并发数 , TPS\n```\n16 , 123456\n32 , 200100\n```\n"
        "### 9.6\n```\n并发数 , TPS\n16 , 133456\n32 , 250000\n```\n"
    )
    response = client.post(
        "/import/summary/", {"host": "blog", "builtin": "select-only", "table": page}
    )
    assert response.status_code == 302
    runs = {r.build.version: r for r in Run.objects.all()}
    assert dict(runs["9.6"].results.values_list("clients", "tps")) == {16: 133456, 32: 250000}
    assert runs["9.5"].comparability_key == runs["9.6"].comparability_key
