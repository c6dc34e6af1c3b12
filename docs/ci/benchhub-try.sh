#!/bin/sh
# Try the patches given as arguments on a BenchHub host and leave the verdict, as a pull request
# comment in markdown, in benchhub-comment.md; exit with benchhub's status (0 no level slower,
# 1 a level slower, 2 an input error, 3 inconclusive after settling, 4 the job failed).
# The CI files next to this script call it; so does BenchHub's own test of it.
#
# From the environment: BENCHHUB_SERVER and BENCHHUB_TOKEN (a personal token with the queue
# scope), BENCHHUB_AGAINST (the recipe or git ref the patches apply to: master, REL_17_STABLE),
# BENCHHUB_HOST; optional: BENCHHUB_WORKLOAD (tpcb-like), BENCHHUB_CLIENTS (1,8,32),
# BENCHHUB_DURATION (30), BENCHHUB_REPEATS (unset: a job's default, as `benchhub try` has it;
# --settle measures the inconclusive levels again), BENCHHUB_COMMENT (benchhub-comment.md).
set -u
comment="${BENCHHUB_COMMENT:-benchhub-comment.md}"
benchhub try "$@" \
    --against "${BENCHHUB_AGAINST:?name the recipe or git ref the patches apply to}" \
    --host "${BENCHHUB_HOST:?name the benchmark host}" \
    --workload "${BENCHHUB_WORKLOAD:-tpcb-like}" \
    --clients "${BENCHHUB_CLIENTS:-1,8,32}" \
    --duration "${BENCHHUB_DURATION:-30}" \
    ${BENCHHUB_REPEATS:+--repeats "$BENCHHUB_REPEATS"} \
    --settle --format markdown > "$comment"
status=$?
cat "$comment"
exit "$status"
