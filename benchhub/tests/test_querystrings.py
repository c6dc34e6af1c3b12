"""A query-string flag reads the same on pages, in the API and in a comparison's key."""

import pytest

from benchhub.querystrings import flag
from benchhub.review.keys import comparison_key

ON = ["1", "true", "on", "yes", "TRUE", "On", " yes "]
OFF = [None, "", "0", "false", "off", "no", "y", "2"]


@pytest.mark.parametrize("value", ON)
def test_it_turns_a_flag_on(value: str) -> None:
    assert flag(value) is True


@pytest.mark.parametrize("value", OFF)
def test_it_leaves_a_flag_off(value: str | None) -> None:
    assert flag(value) is False


@pytest.mark.parametrize("value", ON[:4] + OFF[1:])
def test_it_keys_a_comparison_as_its_page_reads_the_flag(value: str) -> None:
    key = comparison_key(f"versions=13,14&invalid={value}")
    assert ("invalid=1" in key) is flag(value)
