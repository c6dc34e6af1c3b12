"""Benchmark machines: their hardware facts, the history of those facts, and runner tokens."""
