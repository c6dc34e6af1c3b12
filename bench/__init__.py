"""BenchHub's self-benchmark (`make bench`): ingest, comparison at scale, queue, agent overhead.

Each section measures against its floor and its target and returns Figures; bench.run prints them
as a table and writes bench/results.json. docs/performance.md explains the figures.
"""
