"""`benchhub`: try a patch, compare builds and follow jobs from a terminal or a CI job.

Standard library only, like the agent it is installed with; it speaks only the documented REST
API (docs/runner-api.md) with a personal token. docs/cli.md describes the commands and their
exit statuses.
"""
