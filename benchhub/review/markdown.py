"""Comments as safe HTML: Markdown with raw HTML turned off, then sanitised by nh3.

Raw HTML in a comment is shown as text (Markdown's HTML passthrough is removed), and whatever
Markdown produces still goes through an allow-list: p, em, strong, code, pre, a[href] (http,
https, mailto; rel="noopener nofollow"), ul/ol/li, blockquote, h3-h6, br. Headings 1 and 2 become
h3 and h4 so a comment never outranks the page's own headings.
"""

import markdown as markdown_lib
import nh3

ALLOWED_TAGS = {
    "p",
    "em",
    "strong",
    "code",
    "pre",
    "a",
    "ul",
    "ol",
    "li",
    "blockquote",
    "h3",
    "h4",
    "h5",
    "h6",
    "br",
}
ALLOWED_ATTRIBUTES = {"a": {"href"}}
URL_SCHEMES = {"http", "https", "mailto"}


def _only_allowed(tag: str, attribute: str, value: str) -> str | None:
    # nh3 keeps a few generic attributes (title, lang) on every tag unless filtered out.
    # rel is the one nh3 sets itself (link_rel); a comment's own rel never gets this far.
    allowed = attribute in ALLOWED_ATTRIBUTES.get(tag, ()) or (tag, attribute) == ("a", "rel")
    return value if allowed else None


def _renderer() -> markdown_lib.Markdown:
    md = markdown_lib.Markdown(extensions=["fenced_code", "sane_lists"], output_format="html")
    # Without these, Markdown copies raw HTML blocks and inline tags into its output verbatim.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def markdown_render(text: str) -> str:
    """Sanitised HTML for a comment body; safe to mark safe in a template."""
    html = _renderer().convert(text)
    html = (
        html.replace("<h1>", "<h3>")
        .replace("</h1>", "</h3>")
        .replace("<h2>", "<h4>")
        .replace("</h2>", "</h4>")
    )
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_only_allowed,
        url_schemes=URL_SCHEMES,
        link_rel="noopener nofollow",
    )
