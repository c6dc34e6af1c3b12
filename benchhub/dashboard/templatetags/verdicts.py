"""Filters for the verdicts: the same wording as compare.verdict_text."""

import math

from django import template

from benchhub.compare.selectors import NoiseRow
from benchhub.compare.verdict_text import interval_method as interval_method_text
from benchhub.compare.verdict_text import interval_unit_text
from benchhub.compare.verdict_text import noise_sentence as noise_sentence_text
from benchhub.compare.verdict_text import percent as percent_text
from benchhub.stats.verdicts import Ratio

register = template.Library()
NONE = "\u2013"


@register.filter
def percent(fraction: float | None) -> str:
    """0.0412 -> "4.1%"; an infinite or missing value -> an en dash."""
    if fraction is None or not math.isfinite(fraction):
        return NONE
    return percent_text(fraction)


@register.filter
def change(ratio: float | None) -> str:
    """A ratio as the change it is, as the API's change_pct and the CLI say: 0.986 -> "-1.4%"."""
    if ratio is None or not math.isfinite(ratio):
        return NONE
    return f"{100 * (ratio - 1):+.1f}%"


@register.filter
def noise_sentence(row: NoiseRow) -> str:
    """What a host's noise row lets one see, in a sentence (verdict_text.noise_sentence)."""
    return noise_sentence_text(noise=row.noise, repeats=row.repeats)


@register.filter
def interval_method(tps: Ratio) -> str:
    """ "paired" or "unpaired", as the API's interval_method says; empty without an interval."""
    return interval_method_text(tps) or ""


@register.filter
def interval_units(tps: Ratio) -> str:
    """What the interval counted as independent, as the API's interval_unit_text says."""
    return interval_unit_text(tps) or ""
