"""Comments are Markdown rendered safely: hostile input comes out as text or not at all."""

import pytest

from benchhub.review.markdown import markdown_render

HOSTILE = [
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 1">',
    "<svg onload=alert(1)>",
    '<a href="https://ok.example" onclick="alert(1)">x</a>',
    "<iframe src=https://evil.example></iframe>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<scr<script>ipt>alert(1)</script>",
    "<!-- <script>alert(1)</script> -->",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_it_never_lets_raw_html_through(text):
    html = markdown_render(text)
    assert "<script" not in html and "<img" not in html and "<svg" not in html
    assert "<iframe" not in html and "<div" not in html and "<a " not in html
    # Every tag that is left is one of the allow-list, and carries no attribute.
    assert html.startswith("<p>") or html == ""


def test_it_shows_a_script_tag_as_text():
    assert markdown_render("<script>window.__xss = 1</script>") == (
        "<p>&lt;script&gt;window.__xss = 1&lt;/script&gt;</p>"
    )


def test_it_shows_an_img_onerror_as_text():
    html = markdown_render('<img src=x onerror="window.__xss = 1">')
    assert html.startswith("<p>&lt;img src=x onerror=")
    assert "<img" not in html


@pytest.mark.parametrize(
    "link", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<b>x</b>", "vbscript:x"]
)
def test_it_drops_links_to_dangerous_schemes(link):
    html = markdown_render(f"[click]({link})")
    assert "href" not in html
    assert "click" in html


def test_it_keeps_safe_links_with_noopener_nofollow_and_nothing_else():
    html = markdown_render('[docs](https://www.postgresql.org/docs/ "title")')
    assert html == (
        '<p><a href="https://www.postgresql.org/docs/" rel="noopener nofollow">docs</a></p>'
    )


def test_it_renders_the_allowed_markdown():
    html = markdown_render(
        "# Big\n\n## Less\n\n**bold** _em_ `code`\n\n> quoted\n\n- one\n- two\n\n1. first\n\n"
        "```\nSELECT 1 < 2;\n```"
    )
    assert "<h3>Big</h3>" in html and "<h4>Less</h4>" in html
    assert "<strong>bold</strong>" in html and "<em>em</em>" in html and "<code>code</code>" in html
    assert "<blockquote>" in html and "<ul>" in html and "<ol>" in html
    assert "<pre><code>SELECT 1 &lt; 2;\n</code></pre>" in html
    assert "<h1>" not in html and "<h2>" not in html


def test_it_strips_images_and_tables():
    html = markdown_render("![alt](https://example.com/a.png)")
    assert "<img" not in html
