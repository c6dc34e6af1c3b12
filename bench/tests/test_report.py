"""The targets' table: one row per figure with a target, its interval and its verdict, made
again from bench/results.json alone."""

import json

from bench.figures import Figure, write_results
from bench.report import main, merged_runs, report_markdown, runs_path, targets_table


def _figures() -> list[Figure]:
    return [
        Figure("ingest", "upload median / COPY median", 1.4, "x", op="<=", target=1.5,
               low=1.3, high=1.45),
        Figure("ingest", "uploads/s / COPY uploads/s", 0.6, "x", op=">=", target=0.8,
               low=0.55, high=0.7),
        Figure("compare", "compare API p95", 95.0, "ms", op="<=", target=100.0, low=90.0,
               high=110.0),
        Figure("queue", "double claims", 0, "claims", op="<=", target=0, exact=True),
        Figure("ingest", "upload median", 40.0, "ms", low=38.0, high=42.0),  # no target
    ]  # fmt: skip


def test_it_gives_each_target_its_interval_and_verdict_in_one_table():
    rows = targets_table(_figures()).splitlines()
    assert rows[0] == "| section | figure | value | 95% interval | target | verdict |"
    assert rows[2:] == [
        "| ingest | upload median / COPY median | 1.4 x | 1.3 .. 1.45 | <= 1.5 x | met |",
        "| ingest | uploads/s / COPY uploads/s | 0.6 x | 0.55 .. 0.7 | >= 0.8 x | **missed** |",
        "| compare | compare API p95 | 95 ms | 90 .. 110 | <= 100 ms | undecided |",
        "| queue | double claims | 0 claims | exact | <= 0 claims | met |",
    ]


def _document(tmp_path, name, figures, *, sections, commit, started):
    info = {"hostname": "vm", "cpu_model": "EPYC", "cpus": 2}
    options = {"argv": ["--sections", sections], "commit": commit, "started_at": started,
               "finished_at": started}  # fmt: skip
    return write_results(tmp_path / name, figures=figures, info=info, options=options)


def test_it_makes_the_report_again_from_the_results_file(tmp_path, capsys):
    document = _document(tmp_path, "results.json", _figures(), sections="ingest",
                         commit="abc1234", started="2026-12-06T22:00:00")  # fmt: skip
    report = tmp_path / "report.md"
    assert main([str(tmp_path / "results.json"), "--output", str(report)]) == 0
    printed = capsys.readouterr().out
    assert printed == report_markdown([document]) == report.read_text()
    assert '`make bench BENCH_ARGS="--sections ingest"`' in printed and "`abc1234`" in printed
    assert "vm: EPYC, 2 CPUs" in printed
    assert targets_table(_figures()) in printed
    # Made again from the kept runs alone, without the results file.
    report.unlink()
    assert main(["--output", str(report)]) == 0
    assert capsys.readouterr().out == printed == report.read_text()


def test_a_run_of_some_sections_replaces_their_rows_and_keeps_the_others(tmp_path, capsys):
    whole = _document(tmp_path, "whole.json", _figures(), sections="ingest,compare,queue",
                      commit="aaa1111", started="2026-12-06T10:00:00")  # fmt: skip
    again = [Figure("ingest", "upload median / COPY median", 1.2, "x", op="<=", target=1.5,
                    low=1.1, high=1.3)]  # fmt: skip
    _document(tmp_path, "ingest.json", again, sections="ingest", commit="bbb2222",
              started="2026-12-07T10:00:00")  # fmt: skip
    report = tmp_path / "report.md"
    assert main([str(tmp_path / "whole.json"), "--output", str(report)]) == 0
    assert main([str(tmp_path / "ingest.json"), "--output", str(report)]) == 0
    text = capsys.readouterr().out.split("# Performance")[-1]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == [
        "| section | figure | value | 95% interval | target | verdict | run |",
        "| ingest | upload median / COPY median | 1.2 x | 1.1 .. 1.3 | <= 1.5 x | met | 1 |",
        "| compare | compare API p95 | 95 ms | 90 .. 110 | <= 100 ms | undecided | 2 |",
        "| queue | double claims | 0 claims | exact | <= 0 claims | met | 2 |",
    ]
    assert "1. Measured 2026-12-07T10:00:00" in text and "`bbb2222`" in text
    assert "2. Measured 2026-12-06T10:00:00" in text and "`aaa1111`" in text
    kept = json.loads(runs_path(report).read_text())["runs"]
    assert [{f["section"] for f in run["figures"]} for run in kept] == [
        {"ingest"},
        {"compare", "queue"},
    ]
    assert merged_runs(kept, whole)[1:] == [], "a run of every section leaves no other run"


def test_it_says_what_is_missing_when_there_is_nothing_to_report(tmp_path, capsys):
    assert main(["--output", str(tmp_path / "report.md")]) == 2
    assert "no runs to report" in capsys.readouterr().err
    assert not (tmp_path / "report.md").exists()
