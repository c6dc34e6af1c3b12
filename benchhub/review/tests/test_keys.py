import pytest

from benchhub.review.keys import KeyInvalid, comparison_key


def test_it_gives_one_key_for_the_same_comparison_written_two_ways():
    a = comparison_key("/compare/?workload=select-only&host=bench-01&versions=13,14")
    b = comparison_key("versions=13, 14&host=bench-01&workload=select-only&utm=x")
    assert a == b == "host=bench-01&versions=13,14&workload=select-only"


def test_it_keeps_version_order_and_flags_only_when_on():
    key = comparison_key("?versions=15,13&workload=w&host=h&invalid=0&same_hardware=1")
    assert key == "host=h&same_hardware=1&versions=15,13&workload=w"


def test_it_refuses_a_query_that_names_no_comparison():
    with pytest.raises(KeyInvalid):
        comparison_key("host=bench-01")
