"""How a change reads on the pages: "-19.8% (95%: -20.2% to -19.4%)". The wording is
regressions.notices', which the emails and webhooks use too, so a page and a notice read alike."""

from django import template

from benchhub.regressions.notices import interval_text, notice_summary, notice_url, signed_percent

register = template.Library()

# 0.0123 -> "+1.2%"; None -> "-".
register.filter("signed_percent", signed_percent)


@register.filter
def change_interval(regression) -> str:
    """The 95% interval of a regression's change, or why there is none."""
    return interval_text(regression.change_low, regression.change_high)


@register.filter
def notice_line(notice) -> str:
    """What a notice told, in one line (its email's subject), from its prefetched members."""
    members = sorted(notice.members.all(), key=lambda m: -abs(m.change))
    return notice_summary(notice, members) if members else f"notice {notice.pk}"


@register.filter
def notice_link(notice) -> str:
    members = list(notice.members.all())
    return notice_url(notice, members) if members else ""
