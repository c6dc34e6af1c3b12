"""Reading the Compare page's folded sections the way compare.js does."""

from typing import Any


def section_url(permalink: str, name: str, *, fragment: bool = True) -> str:
    """The URL of section `name` of the comparison at `permalink` ("/compare/?...")."""
    url = permalink.replace("/compare/?", f"/compare/{name}/?", 1)
    return f"{url}&fragment=1" if fragment else url


def section_get(client: Any, permalink: str, name: str, *, fragment: bool = True) -> Any:
    """The response of section `name`, as compare.js fetches it (`fragment`) or as a page."""
    return client.get(section_url(permalink, name, fragment=fragment))


def section_html(client: Any, permalink: str, name: str) -> str:
    response = section_get(client, permalink, name)
    assert response.status_code == 200, response.content
    return response.content.decode()
