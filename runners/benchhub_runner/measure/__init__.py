"""Measuring one level: the pgbench command lines (pgbench), the streams of a measurement
and how their figures combine (streams), the order of levels and repeats (order), one level run
(level) and the OS sampled while it runs (telemetry)."""
