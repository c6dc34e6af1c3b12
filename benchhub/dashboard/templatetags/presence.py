"""Filters for live pages; home.js formats the same way, so a poll changes no wording."""

from django import template

register = template.Library()


@register.filter
def seconds_ago(seconds: float | None) -> str:
    """12.3 -> "12 s ago", 150 -> "2 min ago", 7300 -> "2 h ago", None -> "never"."""
    if seconds is None:
        return "never"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min ago"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} d ago"
