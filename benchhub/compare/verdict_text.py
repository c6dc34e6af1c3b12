"""The words of the verdicts: how a level's verdict was computed, the sentence that heads a
comparison, and what a host's noise lets one see. Plain text for the pages and the API (escape
it as any text). The numbers come from the statistics (benchhub.stats), which build no
sentence: only the presentation side (compare.assessment, compare.tables, the dashboard) calls
these.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from benchhub.stats.noise import HostNoise, detectable_difference
from benchhub.stats.verdicts import CurveVerdict, LevelVerdict, Ratio, Unit, Verdict


def percent(fraction: float) -> str:
    """0.0412 -> "4.1%", 0.5 -> "50%"."""
    value = abs(fraction) * 100
    return f"{value:.1f}%" if value < 10 else f"{value:.0f}%"


def signed_percent(ratio: float) -> str:
    """1.043 -> "+4.3%", 0.9 -> "-10%"."""
    return ("+" if ratio >= 1 else "-") + percent(ratio - 1)


def interval_text(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "no interval"
    return f"95% interval {low:.3f} to {high:.3f}"


def level_description(level: LevelVerdict) -> str:
    """How the verdict at one level was reached, in a few sentences."""
    tps = level.tps
    parts = [
        f"Ratio of mean tps {tps.value:.3f} ({signed_percent(tps.value)}), "
        f"{interval_text(tps.low, tps.high)}.",
        _values_text(level.repeats, level.seconds, level.blocks),
        _variation_text(tps, level.noise),
        _verdict_text(level.verdict, level.threshold, level.repeats_needed, tps),
    ]
    return " ".join(p for p in parts if p)


def _values_text(repeats: tuple[int, int], seconds: Sequence[int], blocks: Sequence[int]) -> str:
    runs = f"{repeats[1]} run{'s' if repeats[1] != 1 else ''} against {repeats[0]}"
    measured = [s for s in seconds if s]
    if not measured:
        return f"Each run counts as one value, pgbench's overall tps; {runs}."
    bootstrapped = [b for b in blocks if b]
    # A run just uploaded has its means; the bootstrap of their noise follows in the worker.
    noise = (
        f"their noise from a block bootstrap, blocks of {statistics.median(bootstrapped):.0f} s"
        if bootstrapped
        else "their noise within the run not yet computed"
    )
    how = (
        f"the mean of its steady-state seconds (median {statistics.median(measured):.0f} s; "
        f"{noise})"
    )
    if len(measured) < len(seconds):
        how += ", or pgbench's overall tps without per-second samples"
    return f"Each run counts as one value, {how}; {runs}."


def _variation_text(tps: Ratio, noise: HostNoise | None) -> str:
    if tps.cv is None:
        return ""
    source = "from these runs"
    if tps.history == "used" and noise is not None:
        source = (
            f"from these runs and the host's history ({noise.dof + noise.groups} repeats "
            f"in {noise.groups} runs)"
        )
    elif tps.history == "set aside" and noise is not None:
        source = (
            f"from these runs, which vary more than the host's history ({percent(noise.cv)}), "
            "so the history was set aside"
        )
    if tps.paired:
        return _paired_variation_text(tps)
    floor = ""
    if tps.within_cv >= tps.cv:
        floor = ", no less than each run's own per-second noise"
    text = (
        f"Run-to-run variation {percent(tps.cv)} {source}{floor}; Student's t with "
        f"{tps.dof:.0f} degrees of freedom on the log of the ratio."
    )
    return text + _unit_text(tps)


def _paired_variation_text(tps: Ratio) -> str:
    """The variation of a paired interval: that of the pairs' ratios, said per side (Ratio)."""
    floor = ""
    if tps.within_cv >= (tps.cv or 0):
        floor = ", no less than the repeats' own per-second noise"
    return (
        f"Paired: each repeat against the other version's repeat measured beside it; the "
        f"pairs' ratios vary by {percent(math.sqrt(2) * (tps.cv or 0))}{floor}; Student's t "
        f"with {tps.dof:.0f} degrees of freedom on the mean log ratio of the pairs."
    ) + _unit_text(tps)


def interval_method(tps: Ratio) -> str | None:
    """How the interval was computed: "paired" (over pairs of repeats measured side by side)
    or "unpaired" (over each side's values apart); None without an interval."""
    if tps.low is None:
        return None
    return "paired" if tps.paired else "unpaired"


def interval_unit_text(tps: Ratio) -> str | None:
    """What the interval counted as independent, in the page's words; None without an
    interval. Runs share nothing; the repeats of one run share its cluster, data load and hour;
    a pair's two repeats share the moment they were measured at."""
    if tps.low is None:
        return None
    if tps.unit == Unit.PAIRS:
        return (
            "pairs of repeats measured side by side in one job (paired; the interval sees "
            "only within-job variation)"
        )
    if tps.unit == Unit.REPEATS:
        return "repeats inside one job (the interval sees only within-job variation)"
    base, other = tps.runs
    sides = f"{base} run{'s' if base != 1 else ''} a side"
    if base != other:
        sides = f"{other} run{'s' if other != 1 else ''} against {base}"
    return f"run means ({sides})"


def _unit_text(tps: Ratio) -> str:
    unit = interval_unit_text(tps)
    if unit is None:
        return ""
    if tps.unit == Unit.PAIRS:
        return (
            f" Units: {unit}. A drift of the host between repeats moves both of a pair and "
            "drops out of its ratio; the variation between separate jobs is not seen."
        )
    if tps.unit == Unit.REPEATS:
        return (
            f" Units: {unit}. With one run a side the variation between separate jobs is not "
            "seen; runs of further jobs would show it, more repeats would not."
        )
    return f" Units: {unit}, each run counted as the mean of its repeats."


def _verdict_text(
    verdict: Verdict, threshold: float, repeats_needed: int | None, tps: Ratio
) -> str:
    band = f"\u00b1{percent(threshold)}"
    if verdict == "faster":
        return f"Faster: the whole interval is above 1, and not all of it within {band}."
    if verdict == "slower":
        return f"Slower: the whole interval is below 1, and not all of it within {band}."
    if verdict == "same":
        return f"The same: the whole interval lies within {band}."
    if tps.cv is None:
        return (
            "Inconclusive: with one run a side and no history of this host's noise, the "
            "run-to-run variation is unknown; run 3 or more repeats a side."
        )
    text = f"Inconclusive: the interval includes 1 and reaches beyond {band}"
    if tps.paired and repeats_needed is not None:
        return text + (
            f"; about {repeats_needed} pairs (repeats a side) in one job, or more jobs a side, "
            "would likely settle it."
        )
    if tps.one_job:
        return text + "; more jobs a side, each a run of its own, would settle it."
    if repeats_needed is not None:
        return text + f"; about {repeats_needed} repeats a side would likely settle it."
    return text + "; the difference is too close to the threshold for more repeats to settle."


def curve_summary(
    curve: CurveVerdict, *, baseline_label: str = "the baseline", other_label: str = "this version"
) -> str:
    """One sentence: counts of levels per verdict after Holm (in the order of `curve.counts`),
    and the geometric-mean ratio with its own verdict, from the same Holm family."""
    counts, geomean, low, high = curve.counts, curve.geomean, curve.low, curve.high
    total = sum(counts.values())
    named = {"same": f"the same within \u00b1{percent(curve.threshold)}"}
    found = [f"{named.get(v, v)} at {n}" for v, n in counts.items() if n]
    levels = f"{total} client level{'s' if total != 1 else ''}"
    text = f"{other_label} against {baseline_label}: " + ", ".join(found) + f" of {levels}"
    if total > 1:
        text += " (Holm-corrected)"
    if geomean is not None:
        text += "; "
        if total > 1 and low is not None:
            text += f"{named.get(curve.verdict, curve.verdict)} over the curve: "
        text += f"geometric-mean tps ratio {geomean:.3f} ({signed_percent(geomean)}"
        text += f", {interval_text(low, high)})" if low is not None else ")"
    return text + "."


def noise_sentence(*, noise: HostNoise, repeats: int) -> str:
    """ "On this host, differences under 4.1% are not reliably visible with 3 repeats a side"."""
    smallest = detectable_difference(noise=noise, repeats=repeats)
    return (
        f"On this host (run-to-run variation {percent(noise.cv)}), differences under "
        f"{percent(smallest)} are not reliably visible with {repeats} repeat"
        f"{'s' if repeats != 1 else ''} a side."
    )


def host_noise_text(*, host: dict[int, HostNoise | None], base_repeats: dict[int, int]) -> str:
    """What the host lets a comparison with the baseline's number of repeats see, over levels
    (clients -> the host's noise; clients -> the baseline's repeats); "" when nothing is known."""
    known = [(c, n) for c, n in host.items() if n is not None and base_repeats.get(c)]
    if not known:
        return ""
    repeats = min(base_repeats[c] for c, _ in known)
    visible = [detectable_difference(noise=n, repeats=repeats) for _, n in known]
    finite = [v for v in visible if math.isfinite(v)]
    if not finite:
        return ""
    cvs = [n.cv for _, n in known]
    text = (
        f"On this host, differences under {percent(statistics.median(finite))} are not "
        f"reliably visible with {repeats} repeat{'s' if repeats != 1 else ''} a side"
    )
    if len(finite) > 1:
        text += (
            f" (median of {len(finite)} client levels, {percent(min(finite))} to "
            f"{percent(max(finite))})"
        )
    return text + f"; run-to-run variation {percent(statistics.median(cvs))}."
