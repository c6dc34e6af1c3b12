"""Operating BenchHub: Prometheus metrics at /metrics and JSON logs (docs/deployment.md)."""
