"""The verdicts of the Compare page in Chromium, checked against numbers this test computes on
its own (numpy, scipy) from the per-second samples it uploaded; then "settle it" from the page."""

import math
import re

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, ttest_ind
from scipy.stats import t as student_t

from benchhub.compare.tests.uploads import upload_seconds
from benchhub.jobs.models import Job
from benchhub.testing.browser import screenshot, sign_in

SECONDS = 30
WARMUP = 3  # a tenth of 30 s
REPEATS = 4
THRESHOLD = 0.02
# clients -> (tps of the baseline, true ratio, run-to-run variation)
LEVELS = {1: (1000.0, 1.10, 0.01), 2: (1900.0, 1.01, 0.02), 4: (3600.0, 1.0, 0.002)}
NUMBER = r"(\d+\.\d+)"


def _runs(seed: int, ratio_of: dict[int, float]) -> dict[int, list[list[float]]]:
    """Per level, REPEATS runs of SECONDS per-second tps: a run-to-run effect, a slow start,
    then seconds with 0.2 % noise."""
    rng = np.random.default_rng(seed)
    made = {}
    for clients, (tps, _, cv) in LEVELS.items():
        repeats = []
        for _ in range(REPEATS):
            level = tps * ratio_of[clients] * math.exp(rng.normal(0, cv))
            seconds = level * (1 + rng.normal(0, 0.002, SECONDS))
            seconds[:WARMUP] *= 0.5
            repeats.append([float(v) for v in seconds])
        made[clients] = repeats
    return made


def _interval(other: np.ndarray, base: np.ndarray) -> tuple[float, float, float, float, int]:
    """Ratio of geometric means, its 95% interval, the log ratio's standard error and dof:
    Student's two-sample t on the logs."""
    test = ttest_ind(np.log(other), np.log(base))
    low, high = np.exp(test.confidence_interval(0.95))
    dof = len(other) + len(base) - 2
    squares = sum(float(((np.log(x) - np.log(x).mean()) ** 2).sum()) for x in (other, base))
    pooled = squares / dof
    se = math.sqrt(pooled * (1 / len(other) + 1 / len(base)))
    ratio = math.exp(np.log(other).mean() - np.log(base).mean())
    return ratio, float(low), float(high), se, dof


def _verdict(p_difference: float, p_same: float, log_ratio: float) -> str:
    if p_same < 0.05:
        return "same"
    if p_difference < 0.05:
        return "faster" if log_ratio > 0 else "slower"
    return "inconclusive"


def _holm(pvalues: list[float]) -> list[float]:
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _expected(base_runs: dict, other_runs: dict) -> tuple[dict, str]:
    levels = {}
    for clients in LEVELS:
        base = np.array([np.mean(s[WARMUP:]) for s in base_runs[clients]])
        other = np.array([np.mean(s[WARMUP:]) for s in other_runs[clients]])
        ratio, low, high, se, dof = _interval(other, base)
        log_ratio = math.log(ratio)
        p_difference, p_same = _p(log_ratio, se, dof)
        latency = [
            np.array([np.mean(1000.0 * clients / np.array(s[WARMUP:])) for s in runs[clients]])
            for runs in (base_runs, other_runs)
        ]
        levels[clients] = {
            "ratio": (ratio, low, high),
            "latency": _interval(latency[1], latency[0])[:3],
            "verdict": _verdict(p_difference, p_same, log_ratio),
            "p": (p_difference, p_same),
            "se": (se, dof),
            "mann_whitney": mannwhitneyu(other, base, alternative="two-sided").pvalue,
        }
    # One Holm family per kind of p-value: the levels and the geometric mean over them (one
    # run a side, so the mean treats the levels as independent measurements).
    order = list(levels)
    log_mean = _geomean_log(levels)[0]
    mean = _p(*_geomean_log(levels))
    differences = _holm([levels[c]["p"][0] for c in order] + [mean[0]])
    sameness = _holm([levels[c]["p"][1] for c in order] + [mean[1]])
    for i, c in enumerate(order):
        levels[c]["holm"] = _verdict(differences[i], sameness[i], math.log(levels[c]["ratio"][0]))
    return levels, _verdict(differences[-1], sameness[-1], log_mean)


def _p(log_ratio: float, se: float, dof: float) -> tuple[float, float]:
    """Two-sided p of no difference, and the doubled two one-sided tests' p of sameness."""
    p_difference = float(2 * student_t.sf(abs(log_ratio) / se, dof))
    above_low = student_t.sf((log_ratio - math.log1p(-THRESHOLD)) / se, dof)
    below_high = student_t.cdf((log_ratio - math.log1p(THRESHOLD)) / se, dof)
    return p_difference, float(min(1.0, 2 * max(above_low, below_high)))


def _geomean_log(levels: dict) -> tuple[float, float, float]:
    """The geometric mean's log, standard error and Welch-Satterthwaite degrees of freedom."""
    m = len(levels)
    log_mean = sum(math.log(v["ratio"][0]) for v in levels.values()) / m
    parts = [(v["se"][0] ** 2 / m**2, v["se"][1]) for v in levels.values()]
    total = sum(p for p, _ in parts)
    return log_mean, math.sqrt(total), total**2 / sum(p**2 / d for p, d in parts)


def _geomean(levels: dict) -> tuple[float, float, float]:
    log_mean, se, dof = _geomean_log(levels)
    half = student_t.ppf(0.975, dof) * se
    return math.exp(log_mean), math.exp(log_mean - half), math.exp(log_mean + half)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(NUMBER, text)]


def _changes(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"([+-]\d+\.\d+)%", text)]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_states_the_verdicts_and_intervals_computed_from_the_uploaded_seconds(
    live_server, page, agent, alice
):
    base_runs = _runs(11, {c: 1.0 for c in LEVELS})
    other_runs = _runs(12, {c: ratio for c, (_, ratio, _) in LEVELS.items()})
    upload_seconds(agent, version="13.3", seconds=base_runs)
    upload_seconds(agent, version="15.4", seconds=other_runs)
    expected, overall = _expected(base_runs, other_runs)
    verdicts = {v["verdict"] for v in expected.values()}
    assert verdicts == {"faster", "inconclusive", "same"}  # the data covers three verdicts

    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    url = f"{live_server.url}/compare/?workload=select-only&host=bench-01&versions=13.3,15.4"
    page.goto(url)
    page.wait_for_selector("#verdict-table")
    for clients, want in expected.items():
        row = page.locator(f"#verdict-table tr[data-clients='{clients}']")
        assert row.get_attribute("data-verdict") == want["verdict"]
        assert row.get_attribute("data-holm") == want["holm"]
        # printed as changes to a tenth of a percent: "+10.1% (+9.1% to +11.0%)"
        assert _changes(row.locator("td.ratio").inner_text()) == pytest.approx(
            [100 * (r - 1) for r in want["ratio"]], abs=0.051
        )
        assert _changes(row.locator("td.latency").inner_text()) == pytest.approx(
            [100 * (r - 1) for r in want["latency"]], abs=0.051
        )
        rank = row.locator("td.rank").inner_text()
        assert f"p {want['mann_whitney']:.3f}" in rank
        # What would settle a level left open after Holm, with its time at the job's pace.
        needed = row.locator("td.needed").inner_text()
        assert ("a side" in needed) == (want["holm"] == "inconclusive")
        assert ("at this job's pace" in needed) == (want["holm"] == "inconclusive")

    sentence = page.inner_text(".curve-verdict")
    counts = {v: sum(1 for w in expected.values() if w["holm"] == v) for v in verdicts}
    assert sentence.startswith("15.4 against 13.3: ")
    for verdict, count in counts.items():
        if count:
            word = "the same within \u00b12.0%" if verdict == "same" else verdict
            assert f"{word} at {count}" in sentence
    assert "of 3 client levels (Holm-corrected)" in sentence
    word = "the same within \u00b12.0%" if overall == "same" else overall
    assert f"; {word} over the curve: geometric-mean tps ratio" in sentence
    geomean = _numbers(sentence.split("ratio")[1])
    assert [geomean[0], geomean[-2], geomean[-1]] == pytest.approx(_geomean(expected), abs=0.0015)
    assert "not reliably visible with 4 repeats a side" in page.inner_text("#noise-line")
    assert "beyond spread" not in page.content() and "spread unknown" not in page.content()
    # each column title that names a test opens the method in place, one click away
    page.click("#verdict-table th a.method-link[data-anchor='method-rank']")
    page.wait_for_selector("#method-rank")
    assert page.evaluate("document.getElementById('method').open")
    assert "Mann-Whitney" in page.inner_text("#method")
    assert page.is_visible("#how-computed a[href='/docs/statistics/']")
    screenshot(page, "compare-verdicts")

    # a tighter threshold: the same interval, read against +-0.1 %
    page.fill("#id_threshold", "0.1")
    page.click("#threshold-form button")
    page.wait_for_selector("#verdict-table")
    assert "threshold=0.1" in page.url
    assert page.locator("#verdict-table tr[data-clients='4']").get_attribute("data-verdict") in (
        "inconclusive",
        "faster",
        "slower",
    )

    # settle it: signed in, one click queues the inconclusive levels (after Holm)
    sign_in(page, live_server.url, "alice", "alice-pass-1")
    page.goto(url)
    page.click("#settle-form button")
    page.wait_for_selector("#job-state")
    # One run a side: only runs of separate jobs narrow the interval, so two jobs, each
    # measuring like the runs it settles; the page goes on to the first.
    jobs = list(Job.objects.order_by("id"))
    assert len(jobs) == 2 and page.url.endswith(f"/jobs/{jobs[0].pk}/")
    assert "Queued 2 separate jobs" in page.content()
    for job in jobs:
        assert job.clients == [c for c, w in expected.items() if w["holm"] == "inconclusive"]
        assert job.versions == ["13.3", "15.4"] and job.host is not None
        assert job.host.name == "bench-01" and job.repeats == REPEATS
    assert errors == []
