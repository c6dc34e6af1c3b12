"""The bench's HTTP client reads a response's Server-Timing, as the server writes it."""

import pytest

from bench.client import server_timing


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("app;dur=12.3", 12.3),
        ('db;dur=1.5, app;desc="django";dur=4', 4.0),
        ("app ; dur = 7", 7.0),
        ("db;dur=1.5", None),
        ("app;desc=x", None),
        ("app;dur=soon", None),
        ("", None),
        (None, None),
    ],
)
def test_it_reads_the_app_duration_of_a_server_timing_header(header, expected):
    assert server_timing(header) == expected
