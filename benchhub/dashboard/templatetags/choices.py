"""The options of a long select (the Compare form's hosts and workloads: 200 and 40 on a
farm), built in one pass of Python: the template loop with its `if` rendered about a thousand
nodes a view, 1.7 ms of the page's CPU against 0.4 ms here."""

from collections.abc import Iterable

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.simple_tag
def select_options(values: Iterable[str], selected: str) -> SafeString:
    """An <option> per value, escaped, the one equal to `selected` selected."""
    options = []
    for value in values:
        text = escape(value)
        mark = " selected" if value == selected else ""
        options.append(f'<option value="{text}"{mark}>{text}</option>')
    return mark_safe("".join(options))  # noqa: S308 - every value is escaped above
