"""BenchHub runner: the agent that runs pgbench on a benchmark host.

This package never imports Django; it talks to the server only through the documented HTTP
contract. The pgbench output parser lives in :mod:`benchhub_runner.parse`.
"""

__version__ = "0.1.0"
