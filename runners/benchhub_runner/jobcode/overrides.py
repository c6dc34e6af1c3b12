"""The server settings a job may override: an allowlist, read by the server and the agent.

A benchmark varies memory, WAL, checkpoints, the background writer, the planner, parallelism,
connections, locks, vacuum and autovacuum, statistics and the logging a benchmark reads. Every
other setting is refused, so a setting a new major adds (or an extension's `name.on_init`, which
runs code when an interpreter starts) is refused until someone decides it is harmless; the
denylist in settings.py still names why the worst are refused.

The list holds the names of every major from 9.4 on (a renamed setting under both names, e.g.
`checkpoint_segments` and `max_wal_size`); whether a given server has a name, or takes it under
another, is the agent's business at run time (gucs.settings_plan), which reports what it could
not apply. Standard library only: the server imports it too.
"""

from __future__ import annotations

import re

__all__ = ["ALLOWED_SETTINGS", "override_reason"]

ALLOWED_SETTINGS = frozenset(
    {
        # memory
        "shared_buffers",
        "huge_pages",
        "huge_page_size",
        "shared_memory_type",
        "dynamic_shared_memory_type",
        "min_dynamic_shared_memory",
        "work_mem",
        "hash_mem_multiplier",
        "maintenance_work_mem",
        "autovacuum_work_mem",
        "logical_decoding_work_mem",
        "temp_buffers",
        "temp_file_limit",
        "effective_cache_size",
        "max_stack_depth",
        "max_files_per_process",
        "max_prepared_transactions",
        "max_locks_per_transaction",
        "max_pred_locks_per_transaction",
        "max_pred_locks_per_relation",
        "max_pred_locks_per_page",
        "vacuum_buffer_usage_limit",
        "commit_timestamp_buffers",
        "multixact_member_buffers",
        "multixact_offset_buffers",
        "notify_buffers",
        "serializable_buffers",
        "subtransaction_buffers",
        "transaction_buffers",
        # I/O
        "effective_io_concurrency",
        "maintenance_io_concurrency",
        "io_combine_limit",
        "io_max_combine_limit",
        "io_method",
        "io_workers",
        "io_max_concurrency",
        "backend_flush_after",
        "bgwriter_delay",
        "bgwriter_lru_maxpages",
        "bgwriter_lru_multiplier",
        "bgwriter_flush_after",
        # WAL
        "wal_level",
        "fsync",
        "synchronous_commit",
        "wal_sync_method",
        "full_page_writes",
        "wal_log_hints",
        "wal_compression",
        "wal_init_zero",
        "wal_recycle",
        "wal_buffers",
        "wal_writer_delay",
        "wal_writer_flush_after",
        "wal_skip_threshold",
        "wal_decode_buffer_size",
        "commit_delay",
        "commit_siblings",
        "max_wal_size",
        "min_wal_size",
        "checkpoint_segments",
        "wal_keep_size",
        "wal_keep_segments",
        "max_wal_senders",
        "max_replication_slots",
        "synchronous_standby_names",
        "archive_mode",
        "summarize_wal",
        "recovery_prefetch",
        # checkpoints
        "checkpoint_timeout",
        "checkpoint_completion_target",
        "checkpoint_flush_after",
        "checkpoint_warning",
        # planner
        "seq_page_cost",
        "random_page_cost",
        "cpu_tuple_cost",
        "cpu_index_tuple_cost",
        "cpu_operator_cost",
        "parallel_setup_cost",
        "parallel_tuple_cost",
        "min_parallel_table_scan_size",
        "min_parallel_index_scan_size",
        "min_parallel_relation_size",
        "jit",
        "jit_above_cost",
        "jit_inline_above_cost",
        "jit_optimize_above_cost",
        "default_statistics_target",
        "constraint_exclusion",
        "cursor_tuple_fraction",
        "from_collapse_limit",
        "join_collapse_limit",
        "plan_cache_mode",
        "recursive_worktable_factor",
        "geqo",
        "geqo_threshold",
        "geqo_effort",
        "geqo_pool_size",
        "geqo_generations",
        "geqo_selection_bias",
        "geqo_seed",
        "force_parallel_mode",
        "debug_parallel_query",
        # parallelism
        "max_worker_processes",
        "max_parallel_workers",
        "max_parallel_workers_per_gather",
        "max_parallel_maintenance_workers",
        "parallel_leader_participation",
        # connections
        "max_connections",
        "superuser_reserved_connections",
        "reserved_connections",
        # locks and timeouts
        "deadlock_timeout",
        "lock_timeout",
        "statement_timeout",
        "transaction_timeout",
        "idle_in_transaction_session_timeout",
        "idle_session_timeout",
        "default_transaction_isolation",
        "old_snapshot_threshold",
        "default_toast_compression",
        # vacuum (autovacuum_* below)
        "vacuum_cost_delay",
        "vacuum_cost_page_hit",
        "vacuum_cost_page_miss",
        "vacuum_cost_page_dirty",
        "vacuum_cost_limit",
        "vacuum_freeze_min_age",
        "vacuum_freeze_table_age",
        "vacuum_multixact_freeze_min_age",
        "vacuum_multixact_freeze_table_age",
        "vacuum_failsafe_age",
        "vacuum_multixact_failsafe_age",
        "vacuum_defer_cleanup_age",
        "vacuum_cleanup_index_scale_factor",
        "vacuum_truncate",
        "vacuum_max_eager_freeze_failure_rate",
        # statistics
        "track_activities",
        "track_counts",
        "track_io_timing",
        "track_wal_io_timing",
        "track_functions",
        "track_activity_query_size",
        "track_commit_timestamp",
        "stats_fetch_consistency",
        # logging a benchmark reads (into the server log the agent keeps)
        "log_min_duration_statement",
        "log_min_duration_sample",
        "log_statement_sample_rate",
        "log_transaction_sample_rate",
        "log_checkpoints",
        "log_lock_waits",
        "log_temp_files",
        "log_autovacuum_min_duration",
        "log_connections",
        "log_disconnections",
        "log_duration",
        "log_statement",
        "log_min_messages",
        "log_min_error_statement",
        "log_error_verbosity",
        "log_line_prefix",
        "log_parameter_max_length",
        "log_parameter_max_length_on_error",
        "log_startup_progress_interval",
        "log_executor_stats",
        "log_planner_stats",
        "log_parser_stats",
        "log_statement_stats",
        # the pg_stat_statements the agent preloads
        "pg_stat_statements.max",
        "pg_stat_statements.track",
        "pg_stat_statements.track_utility",
        "pg_stat_statements.track_planning",
        "pg_stat_statements.save",
    }
)
# Families whose every member is a knob of the same kind: planner switches, autovacuum.
ALLOWED_FAMILIES = re.compile(r"^(enable_[a-z_]+|autovacuum(_[a-z_]+)?)$")


def override_reason(name: str) -> str | None:
    """Why a job may not override server setting `name`, or None when it may."""
    key = name.strip().lower()
    if key in ALLOWED_SETTINGS or ALLOWED_FAMILIES.match(key):
        return None
    return (
        "is not one a job may override: jobs may set memory, I/O, WAL, checkpoint, planner, "
        "parallelism, connection, lock, vacuum, statistics and logging settings (docs/security.md)"
    )
