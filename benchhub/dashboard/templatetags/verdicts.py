"""Filters for the verdicts: the same wording as compare.verdict_text."""

import math

from django import template

from benchhub.compare.verdict_text import percent as percent_text

register = template.Library()
NONE = "\u2013"


@register.filter
def percent(fraction: float | None) -> str:
    """0.0412 -> "4.1%"; an infinite or missing value -> an en dash."""
    if fraction is None or not math.isfinite(fraction):
        return NONE
    return percent_text(fraction)
