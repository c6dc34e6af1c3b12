"""Workloads: what pgbench runs (builtin or custom scripts), how, and what it sets up first."""
