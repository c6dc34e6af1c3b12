"""How a change reads on the pages: "-19.8% (95%: -20.2% to -19.4%)"."""

from django import template

register = template.Library()


@register.filter
def signed_percent(value: float | None) -> str:
    """0.0123 -> "+1.2%"; None -> "-"."""
    return "-" if value is None else f"{value * 100:+.1f}%"


@register.filter
def change_interval(regression) -> str:
    """The 95% interval of a regression's change, or why there is none."""
    return interval_text(regression.change_low, regression.change_high)


def interval_text(low: float | None, high: float | None) -> str:
    """The 95% interval of a change from its ends, or why there is none."""
    if low is None or high is None:
        return "no interval: a side has a single run"
    return f"95% interval {signed_percent(low)} to {signed_percent(high)}"


@register.filter
def notice_line(notice) -> str:
    """What a notice told, in one line (its email's subject), from its prefetched members."""
    from benchhub.regressions.notices import notice_summary

    members = sorted(notice.members.all(), key=lambda m: -abs(m.change))
    return notice_summary(notice, members) if members else f"notice {notice.pk}"


@register.filter
def notice_link(notice) -> str:
    from benchhub.regressions.notices import notice_url

    members = list(notice.members.all())
    return notice_url(notice, members) if members else ""
