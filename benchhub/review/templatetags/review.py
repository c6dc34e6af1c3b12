"""Template helpers of team review.

`{{ comment.body|markdown }}` renders a comment through review.markdown (sanitised, so its output
is marked safe here and nowhere else). `{% comparison_thread key %}` renders the thread of a
comparison with its form; the compare page includes it with the permalink's query string:

    {% load review %}{% comparison_thread request.GET.urlencode %}
"""

from django import template
from django.utils.safestring import SafeString, mark_safe

from benchhub.review import selectors
from benchhub.review.keys import KeyInvalid, comparison_key
from benchhub.review.markdown import markdown_render

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    return mark_safe(markdown_render(text))  # noqa: S308 - nh3 allow-list in markdown_render


@register.inclusion_tag("review/_thread.html", takes_context=True)
def comparison_thread(context: template.Context, query: str) -> dict:
    """The thread of the comparison named by `query` (a permalink or its query string)."""
    request = context.get("request")
    try:
        key = comparison_key(query)
    except KeyInvalid:
        key = ""
    return {
        "request": request,
        "user": context.get("user"),
        "csrf_token": context.get("csrf_token"),
        "comments": list(selectors.comment_list(comparison_key=key)) if key else [],
        "comparison_key": key,
        "next": request.get_full_path() if request else "/",
    }
