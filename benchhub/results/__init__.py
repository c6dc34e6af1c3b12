"""Runs, their results per client level and repeat, progress samples, and per-level aggregates."""
