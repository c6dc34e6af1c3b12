"""The catalog's entries: pgbench's builtins and the published experiments E1..E5.

Each entry turns its params into SQL and scripts valid on PostgreSQL 10 to 18. Setup statements
are run one at a time by the agent (psql), so a VACUUM stays a statement of its own; the agent
replaces `{max_clients}` in setup, `{clients}` in level_setup and `{n}` in per_client scripts,
and converts `\\set x random(a, b)` to `\\setrandom` for pgbench 9.5 and older.
docs/workloads.md describes every entry and what differs from the published setups.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from benchhub_runner.servers.tablespaces import TABLESPACE_NAME, TABLESPACE_NAME_RULE

from benchhub.workloads.catalog_types import Entry, JobDefaults, Param

ROWS_MAX = 10**10
E1_SMALL_CLIENTS = [1, 2, 4, 8]
E1_PUBLISHED_CLIENTS = [16, 32, 64, 72, 86, 96, 128, 192, 256]
E1_SMALL_CONF = {"synchronous_commit": "off", "full_page_writes": "off"}
E1_PUBLISHED_CONF = {
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_writer_delay": "10ms",
}
E1_TUNING = (
    "\n\nThe published host was tuned: a large shared_buffers, synchronous_commit off, "
    "full_page_writes off, a long checkpoint_timeout, a big max_wal_size, wal_writer_delay "
    "10ms, and sysctl/limits (kernel.sem, shm*, vm.dirty_*, swappiness 0, nofile). The small "
    "defaults only turn synchronous_commit and full_page_writes off; set the rest in the job's "
    "config_overrides on a host that has the memory."
)
E1_JOB = JobDefaults(clients=E1_SMALL_CLIENTS, duration_s=10, config_overrides=E1_SMALL_CONF)
E1_PUBLISHED = JobDefaults(
    clients=E1_PUBLISHED_CLIENTS, duration_s=120, config_overrides=E1_PUBLISHED_CONF
)
TABLESPACES = (
    " The published tables lived in separate tablespaces on separate disks: name two "
    "tablespaces the host's agent offers ([tablespaces] in its configuration maps each name to a "
    "directory) and the agent creates them for the job and records each one's device and I/O; "
    "left empty, everything is in the default tablespace."
)


def _tablespace(name: str, help_text: str) -> Param:
    return Param(
        name=name,
        type="str",
        default="",
        published=None,
        max_length=63,
        help=f"{help_text}; a name from the host's [tablespaces] (empty: the default one)",
    )


def _tablespaces_check(params: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    return {
        name: f"Not a tablespace name: {TABLESPACE_NAME_RULE}."
        for name in names
        if params[name] and not TABLESPACE_NAME.match(params[name])
    }


def _tablespaces_job(
    job: JobDefaults, params: Mapping[str, Any], names: tuple[str, ...]
) -> JobDefaults:
    used = list(dict.fromkeys(params[name] for name in names if params[name]))
    return replace(job, tablespaces=used)


def _in(tablespace: str, clause: str = "TABLESPACE") -> str:
    return f" {clause} {tablespace}" if tablespace else ""


def _scale(*, default: int, published: int | None) -> Param:
    return Param(
        name="scale",
        type="int",
        default=default,
        published=published,
        minimum=1,
        maximum=100000,
        help="pgbench -i -s: 100000 pgbench_accounts rows per unit (the job's scale)",
    )


def _rows(*, default: int, published: int) -> Param:
    return Param(
        name="rows",
        type="int",
        default=default,
        published=published,
        minimum=1,
        maximum=ROWS_MAX,
        help="rows loaded into tbl; ids are drawn uniformly in 1..rows",
    )


def _batch(*, default: int, published: int) -> Param:
    return Param(
        name="batch",
        type="int",
        default=default,
        published=published,
        minimum=1,
        maximum=100000,
        help="rows inserted per transaction (one statement)",
    )


# --- builtins -------------------------------------------------------------------------------


def _builtin(name: str) -> Entry:
    def build(params: Mapping[str, Any]) -> dict[str, Any]:
        return {"builtin": name, "query_mode": "prepared"}

    return Entry(
        id=name,
        experiment="builtin",
        title=f"pgbench {name}",
        description=(
            f"pgbench's builtin {name} script on tables made by `pgbench -i -s <scale>`, "
            "swept over client levels with one thread per client. Presented as tps against "
            "clients, one line per version."
        ),
        params=(_scale(default=1, published=None),),
        build=build,
        small_job=JobDefaults(clients=[1, 2, 4, 8], duration_s=10),
    )


# --- E1 ---------------------------------------------------------------------------------------

E1_INTRO = (
    "E1 (one major version against the previous one, 32 cores, 512 GB, data smaller than RAM): "
    "clients 16 to 256, threads = clients, `-M prepared -n -r -T 120`. "
)


def _pk_table(params: Mapping[str, Any]) -> list[str]:
    return [
        "CREATE TABLE tbl (id int, info text, crt_time timestamp)",
        "INSERT INTO tbl (id, info, crt_time) "
        f"SELECT id, md5(id::text), clock_timestamp() FROM generate_series(1, {params['rows']}) "
        "AS id",
        "ALTER TABLE tbl ADD PRIMARY KEY (id)",
        "VACUUM ANALYZE tbl",
    ]


def _pk_entry(*, entry_id: str, title: str, statement: str, what: str) -> Entry:
    def build(params: Mapping[str, Any]) -> dict[str, Any]:
        body = f"\\set id random(1, {params['rows']})\n{statement}\n"
        return {
            "setup": _pk_table(params),
            "scripts": [{"name": entry_id.removeprefix("e1-"), "weight": 1, "body": body}],
            "query_mode": "prepared",
            "options": ["-n"],
        }

    return Entry(
        id=entry_id,
        experiment="E1",
        title=title,
        description=(
            E1_INTRO + f"{what} Table tbl (id int, info text, crt_time timestamp) with `rows` "
            "rows and a primary key on id, vacuumed and analyzed after the load. The id is "
            "drawn uniformly in 1..rows (`\\setrandom` for pgbench 9.5 and older). Presented "
            "as tps against clients, one line per version." + E1_TUNING
        ),
        params=(_rows(default=100000, published=100000000),),
        build=build,
        small_job=E1_JOB,
        published_job=E1_PUBLISHED,
    )


INSERT_COLUMNS = ", ".join(f"c{i} int8 DEFAULT 0" for i in range(1, 21))
INSERT_DDL = f"(id bigserial, {INSERT_COLUMNS}, crt_time timestamptz)"


def _insert_table(table: str) -> list[str]:
    return [
        f"CREATE TABLE {table} {INSERT_DDL}",
        f"ALTER TABLE {table} SET (autovacuum_enabled = off)",
        f"ALTER SEQUENCE {table}_id_seq CACHE 100000",
        f"CREATE INDEX {table}_id_brin ON {table} USING brin (id)",
        f"CREATE INDEX {table}_crt_time_brin ON {table} USING brin (crt_time)",
    ]


def _insert_statement(table: str, batch: int) -> str:
    if batch == 1:
        return f"INSERT INTO {table} (crt_time) VALUES (now());"
    return f"INSERT INTO {table} (crt_time) SELECT now() FROM generate_series(1, {batch});"


def _insert_build(params: Mapping[str, Any]) -> dict[str, Any]:
    batch = params.get("batch", 1)
    return {
        "setup": _insert_table("t_insert"),
        "level_setup": ["TRUNCATE t_insert"],
        "streams": [
            {
                "name": "insert",
                "role": "measured",
                "scripts": [
                    {"name": "insert", "weight": 1, "body": _insert_statement("t_insert", batch)}
                ],
                "clients": None,
                "threads": None,
                "rows_per_transaction": batch,
            }
        ],
        "combine": "sum",
        "query_mode": "prepared",
        "options": ["-n"],
    }


def _per_table_setup() -> list[str]:
    """test1..test{max_clients}, each a clone of t_insert with its own sequence and indexes."""
    return [
        "DO $$\nBEGIN\n  FOR i IN 1..{max_clients} LOOP\n"
        f"    EXECUTE format('CREATE TABLE %I {INSERT_DDL} WITH (autovacuum_enabled = off)',"
        " 'test' || i);\n"
        "    EXECUTE format('ALTER SEQUENCE %I CACHE 100000', 'test' || i || '_id_seq');\n"
        "    EXECUTE format('CREATE INDEX %I ON %I USING brin (id)', 'test' || i || '_id_brin',"
        " 'test' || i);\n"
        "    EXECUTE format('CREATE INDEX %I ON %I USING brin (crt_time)',"
        " 'test' || i || '_crt_time_brin', 'test' || i);\n"
        "  END LOOP;\nEND\n$$"
    ]


PER_TABLE_TRUNCATE = (
    "DO $$\nBEGIN\n  FOR i IN 1..{clients} LOOP\n"
    "    EXECUTE format('TRUNCATE %I', 'test' || i);\n  END LOOP;\nEND\n$$"
)


def _per_table_build(params: Mapping[str, Any]) -> dict[str, Any]:
    batch = params.get("batch", 1)
    return {
        "setup": _per_table_setup(),
        "level_setup": [PER_TABLE_TRUNCATE],
        "streams": [
            {
                "name": "tables",
                "role": "measured",
                "per_client": True,
                "scripts": [
                    {"name": "insert", "weight": 1, "body": _insert_statement("test{n}", batch)}
                ],
                "clients": None,
                "threads": None,
                "rows_per_transaction": batch,
            }
        ],
        "combine": "sum",
        "query_mode": "prepared",
        "options": ["-n"],
    }


INSERT_TABLE_TEXT = (
    "a bigserial id, 20 int8 columns c1..c20 defaulting to 0 and a timestamptz crt_time; "
    "autovacuum off, sequence cache 100000, BRIN indexes on id and crt_time (which arrived "
    "in 9.5: the entry runs on 9.5 and later, as published). "
)
ROWS_PER_S = (
    "The workload is one measured stream whose rows_per_transaction is the batch size, so each "
    "level also reports rows/s = tps x batch. "
)


def _insert_entry(*, entry_id: str, title: str, batch: bool, per_table: bool) -> Entry:
    if per_table:
        where = (
            "Tables test1..test{max_clients} are made in setup, each "
            + INSERT_TABLE_TEXT
            + "Before every measurement the level's tables test1..test{clients} are truncated "
            "(and the agent checkpoints); then N single-client pgbench processes (-c 1 -j 1) "
            "start at once, process n inserting into test{n}; the level's tps is their sum. "
        )
    else:
        where = (
            "Table t_insert: "
            + INSERT_TABLE_TEXT
            + "It is truncated before every measurement (level_setup), so each level starts "
            "from an empty table as the published runs did. "
        )
    rows = "one statement inserting `batch` rows" if batch else "a single-row insert"
    return Entry(
        id=entry_id,
        experiment="E1",
        title=title,
        description=(
            E1_INTRO
            + f"Script: {rows} with crt_time = now(). "
            + where
            + ROWS_PER_S
            + "Presented as tps against clients, one line per version."
            + E1_TUNING
        ),
        params=(_batch(default=400, published=400),) if batch else (),
        build=_per_table_build if per_table else _insert_build,
        small_job=E1_JOB,
        published_job=E1_PUBLISHED,
        min_major="9.5",
    )


# --- E2 ---------------------------------------------------------------------------------------


def _idle_check(params: Mapping[str, Any]) -> dict[str, str]:
    if params["idle_threads"] > params["idle_connections"]:
        return {"idle_threads": "At most idle_connections (pgbench -j <= -c)."}
    return {}


def _idle_build(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "streams": [
            {
                "name": "idle",
                "role": "background",
                "clients": params["idle_connections"],
                "threads": params["idle_threads"],
                "scripts": [{"name": "idle", "weight": 1, "body": "SELECT pg_sleep(2000);"}],
            },
            {"name": "select-only", "role": "measured", "builtin": "select-only", "threads": None},
        ],
        "combine": "measured",
        "progress_s": 2,
        "query_mode": "prepared",
    }


E2_INTRO = (
    "E2 (the cost of idle connections, 13.3 against 14beta1 on a 2-socket Xeon Silver 4210R "
    "with 256 GB): max_connections 11000, everything else default; data from `pgbench -i -s "
    "200`, whose init timings are reported too. "
)

# The post's only change from the defaults: a server for thousands of connections.
E2_PUBLISHED_CONF = {"max_connections": "11000"}

E2_IDLE = Entry(
    id="e2-idle-connections",
    experiment="E2",
    title="select-only beside idle connections",
    description=E2_INTRO
    + "A background stream holds `idle_connections` connections open, each running `SELECT "
    "pg_sleep(2000)`; while they idle, the measured stream runs the builtin select-only "
    "(`-S -M prepared -c 128 -j 16 -T 30 -P 2` in the publication, which also tried 20000 idle "
    "connections). The level's tps is the measured stream's. The job's fixed threads are the "
    "measured stream's -j (the agent caps -j at the level's clients). The published job keeps "
    "the post's max_connections = 11000; a job without it has max_connections raised by the "
    "agent to fit the idle and measured connections (the run says so), as is the open-files "
    "limit. "
    "Presented as a table of connections against tps, with the per-2-second progress.",
    params=(
        _scale(default=10, published=200),
        Param(
            name="idle_connections",
            type="int",
            default=200,
            published=9000,
            minimum=1,
            maximum=50000,
            help="connections held open by the background stream, each in pg_sleep(2000)",
        ),
        Param(
            name="idle_threads",
            type="int",
            default=4,
            published=16,
            minimum=1,
            maximum=1000,
            help="pgbench -j of the background stream",
        ),
    ),
    build=_idle_build,
    check=_idle_check,
    small_job=JobDefaults(clients=[8, 32], duration_s=10, threads_policy="fixed", threads=2),
    published_job=JobDefaults(
        clients=[128],
        duration_s=30,
        threads_policy="fixed",
        threads=16,
        config_overrides=E2_PUBLISHED_CONF,
    ),
)


def _sweep_build(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"builtin": "select-only", "query_mode": "prepared", "progress_s": 2}


E2_SWEEP = Entry(
    id="e2-connection-sweep",
    experiment="E2",
    title="select-only over many connections",
    description=E2_INTRO
    + "The second sweep has no idle connections: the builtin select-only at clients 64 to "
    "10000 with a fixed `-j 16` (`-P 2`). The published job keeps max_connections = 11000; "
    "without it the agent raises max_connections to fit the largest level, as it raises the "
    "open-files limit. Presented as a table of connections against tps, with "
    "the per-2-second progress.",
    params=(_scale(default=10, published=200),),
    build=_sweep_build,
    small_job=JobDefaults(
        clients=[8, 32, 64, 128], duration_s=10, threads_policy="fixed", threads=2
    ),
    published_job=JobDefaults(
        clients=[64, 128, 256, 1000, 5000, 10000],
        duration_s=30,
        threads_policy="fixed",
        threads=16,
        config_overrides=E2_PUBLISHED_CONF,
    ),
)


# --- E3 ---------------------------------------------------------------------------------------

# pg_proc, not to_regproc() (9.4+): the published runs were on 9.2.
UUID_FUNCTION = (
    "DO $$\nBEGIN\n"
    "  IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc WHERE proname = 'gen_random_uuid') THEN\n"
    "    EXECUTE 'CREATE FUNCTION bh_uuid() RETURNS uuid LANGUAGE sql VOLATILE "
    "AS ''SELECT gen_random_uuid()''';\n"
    "  ELSE\n"
    '    CREATE EXTENSION IF NOT EXISTS "uuid-ossp";\n'
    "    EXECUTE 'CREATE FUNCTION bh_uuid() RETURNS uuid LANGUAGE sql VOLATILE "
    "AS ''SELECT uuid_generate_v4()''';\n"
    "  END IF;\nEND\n$$"
)
KEY_TYPES = {"uuid": "uuid", "text": "text", "int8": "int8"}
KEY_VALUES = {
    "uuid": "bh_uuid()",
    "text": "'benchhub-sequential-key-' || nextval('t_key_seq')",
    "int8": "nextval('t_key_seq')",
}


E3_TABLESPACES = ("table_tablespace", "index_tablespace")


def _key_check(params: Mapping[str, Any]) -> dict[str, str]:
    if params["key_type"] != "text" and params["storage"] not in ("default", "plain"):
        return {"storage": f"A {params['key_type']} key is fixed-length: its storage is plain."}
    return _tablespaces_check(params, E3_TABLESPACES)


def _key_build(params: Mapping[str, Any]) -> dict[str, Any]:
    key_type, storage = params["key_type"], params["storage"]
    setup = [UUID_FUNCTION] if key_type == "uuid" else ["CREATE SEQUENCE t_key_seq"]
    setup.append(
        f"CREATE TABLE t_key (id {KEY_TYPES[key_type]}, crt_time timestamp)"
        + _in(params["table_tablespace"])
    )
    if storage != "default":
        setup.append(f"ALTER TABLE t_key ALTER COLUMN id SET STORAGE {storage.upper()}")
    if params["prefill_rows"]:
        setup.append(
            f"INSERT INTO t_key (id, crt_time) SELECT {KEY_VALUES[key_type]}, clock_timestamp() "
            f"FROM generate_series(1, {params['prefill_rows']})"
        )
    if params["index"]:
        setup.append(
            "ALTER TABLE t_key ADD PRIMARY KEY (id)"
            + _in(params["index_tablespace"], "USING INDEX TABLESPACE")
        )
    body = f"INSERT INTO t_key (id, crt_time) VALUES ({KEY_VALUES[key_type]}, now());\n"
    return {
        "setup": setup,
        "scripts": [{"name": f"insert-{key_type}", "weight": 1, "body": body}],
        "query_mode": "prepared",
        "options": ["-n"],
    }


E3_KEY = Entry(
    id="e3-key-insert",
    experiment="E3",
    title="random UUID keys against sequential keys",
    description=(
        "E3 (9.2): single-row inserts into t_key (id <key_type>, crt_time timestamp) with a "
        "primary key on id, `-M prepared -n -c 8 -j 8 -T 60`, a checkpoint before each run "
        "(the agent checkpoints before every measurement anyway). uuid keys are random "
        "(bh_uuid(): gen_random_uuid() on PostgreSQL 13 and later, uuid-ossp's "
        "uuid_generate_v4() before, as published); text keys are a fixed prefix followed by "
        "nextval(); int8 keys come from a sequence. Variants: an empty table or one prefilled "
        "with `prefill_rows` (50M published), the key column's storage, and no index at all. "
        "The primary key is built after the prefill. Rows accumulate over levels and repeats "
        "(nothing is truncated). The published finding: with 50M rows random keys fall to "
        "about 3.5k tps against about 76k for sequential ones, with ~24x the IO wait. "
        "Presented as tps per key type and size with the OS evidence (CPU iowait, device "
        "utilisation and write rates, from the agent's telemetry) beside it." + TABLESPACES
    ),
    params=(
        Param(
            name="key_type",
            type="choice",
            default="uuid",
            published="uuid",
            choices=("uuid", "text", "int8"),
            help="random uuid, prefix || nextval() text, or a sequential int8",
        ),
        Param(
            name="prefill_rows",
            type="int",
            default=200000,
            published=50000000,
            minimum=0,
            maximum=ROWS_MAX,
            help="rows inserted before the sweep (0: start from an empty table)",
        ),
        Param(
            name="storage",
            type="choice",
            default="default",
            published="default",
            choices=("default", "plain", "main", "external", "extended"),
            help="ALTER COLUMN id SET STORAGE; 'default' keeps the type's own. Only text keys "
            "take main/external/extended (uuid and int8 are fixed-length: plain)",
        ),
        Param(
            name="index",
            type="bool",
            default=True,
            published=True,
            help="a primary key on id (false: no index at all)",
        ),
        _tablespace("table_tablespace", "where t_key lives"),
        _tablespace("index_tablespace", "where its primary key lives"),
    ),
    build=_key_build,
    check=_key_check,
    job_for=lambda job, params: _tablespaces_job(job.with_params(params), params, E3_TABLESPACES),
    small_job=JobDefaults(clients=[2], duration_s=10),
    published_job=JobDefaults(clients=[8], duration_s=60),
)


# --- E4 ---------------------------------------------------------------------------------------


E4_TABLESPACES = ("even_tablespace", "odd_tablespace")


def _children(partitions: int, even: str, odd: str) -> str:
    """The children, alternating between two tablespaces as published (even, odd)."""
    where = {0: _in(even).replace("'", "''"), 1: _in(odd).replace("'", "''")}
    return (
        "DO $$\nBEGIN\n"
        f"  FOR i IN 0..{partitions - 1} LOOP\n"
        "    EXECUTE format('CREATE TABLE %I () INHERITS (t_heap)' || CASE WHEN i % 2 = 0 "
        f"THEN '{where[0]}' ELSE '{where[1]}' END, 't_heap_' || i);\n"
        "  END LOOP;\nEND\n$$"
    )


def _heap_setup(params: Mapping[str, Any]) -> list[str]:
    partitions = params["partitions"]
    child = f"'t_heap_' || mod(sid, {partitions})"
    setup = [
        "CREATE TABLE t_heap (sid int, info text, crt_time timestamp)",
        _children(partitions, params["even_tablespace"], params["odd_tablespace"]),
        "CREATE FUNCTION ins_batch(sid int, n int) RETURNS int LANGUAGE plpgsql AS $$\n"
        "DECLARE\n  done int;\nBEGIN\n"
        "  EXECUTE format('INSERT INTO %I (sid, info, crt_time) SELECT $1, md5(random()::text), "
        f"clock_timestamp() FROM generate_series(1, $2)', {child}) USING sid, n;\n"
        "  GET DIAGNOSTICS done = ROW_COUNT;\n  RETURN done;\nEND\n$$",
        "CREATE FUNCTION consume_batch(sid int, n int) RETURNS int LANGUAGE plpgsql AS $$\n"
        f"DECLARE\n  child text := {child};\n  done int;\nBEGIN\n"
        "  EXECUTE format('DELETE FROM %I WHERE ctid = ANY (ARRAY(SELECT ctid FROM %I LIMIT $1))',"
        " child, child) USING n;\n"
        "  GET DIAGNOSTICS done = ROW_COUNT;\n  RETURN done;\nEND\n$$",
    ]
    per_child = params["prefill_rows"] // partitions
    if per_child:
        setup.append(
            f"SELECT sum(ins_batch(i, {per_child})) FROM generate_series(0, {partitions - 1}) AS i"
        )
    return setup


def _stream(name: str, function: str, params: Mapping[str, Any]) -> dict[str, Any]:
    body = f"\\set sid random(1, 1000000)\nSELECT {function}(:sid, {params['batch']});\n"
    return {
        "name": name,
        "role": "measured",
        "scripts": [{"name": function, "weight": 1, "body": body}],
        "clients": params["stream_clients"],
        "threads": params["stream_clients"],
        "rows_per_transaction": params["batch"],
    }


def _heap_build(params: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "setup": _heap_setup(params),
        "streams": [
            _stream("writer", "ins_batch", params),
            _stream("consumer", "consume_batch", params),
        ],
        "combine": "sum",
        "progress_s": 5,
        "query_mode": "prepared",
        "options": ["-n"],
    }


def _heap_job(job: JobDefaults, params: Mapping[str, Any]) -> JobDefaults:
    # Both streams have fixed clients, so the level is a label: the connections it opens.
    return replace(job, clients=[params["stream_clients"] * 2])


E4_HEAP = Entry(
    id="e4-write-consume",
    experiment="E4",
    title="write and consume at the same time",
    description=(
        "E4 (10, a 56-core cloud VM): heap table t_heap (sid int, info text, crt_time "
        "timestamp) with `partitions` child tables t_heap_0.. by inheritance, no indexes. "
        "ins_batch(sid, n) inserts n rows into child mod(sid, partitions); consume_batch(sid, "
        "n) deletes n rows of that child by ctid. Two measured streams run at once, a writer "
        "and a consumer, each with `stream_clients` clients and threads (sid random in "
        "1..1e6, `-M prepared -n -r -P 5 -c 28 -j 28 -T 300` published). Each stream reports "
        "rows/s = tps x batch as published (about 1.9M rows/s written, 4.2M consumed); like "
        "the published figure, a consume that finds fewer rows than the batch still counts "
        "the whole batch. The level's tps is the sum of both streams. Since both streams have "
        "fixed clients, the job has one level whose number is the connections it opens "
        "(2 x stream_clients). `prefill_rows` (not published) spreads rows over the children "
        "before the run so the consumer starts with something to delete. Presented per stream: "
        "tps, latency and rows per second. The published children alternated between two "
        "tablespaces: `even_tablespace` takes t_heap_0, t_heap_2, ... and `odd_tablespace` the "
        "others." + TABLESPACES
    ),
    params=(
        Param(
            name="partitions",
            type="int",
            default=16,
            published=2048,
            minimum=1,
            maximum=10000,
            help="child tables of t_heap",
        ),
        Param(
            name="stream_clients",
            type="int",
            default=2,
            published=28,
            minimum=1,
            maximum=1000,
            help="clients (and threads) of each stream",
        ),
        _batch(default=100, published=1000),
        Param(
            name="prefill_rows",
            type="int",
            default=0,
            published=0,
            minimum=0,
            maximum=ROWS_MAX,
            help="rows spread over the children before the sweep (not in the publication)",
        ),
        _tablespace("even_tablespace", "where the even children live"),
        _tablespace("odd_tablespace", "where the odd children live"),
    ),
    build=_heap_build,
    check=lambda params: _tablespaces_check(params, E4_TABLESPACES),
    small_job=JobDefaults(clients=[4], duration_s=10),
    published_job=JobDefaults(clients=[56], duration_s=300),
    job_for=lambda job, params: _tablespaces_job(
        _heap_job(job.with_params(params), params), params, E4_TABLESPACES
    ),
)


# --- E5 ---------------------------------------------------------------------------------------

E5_SMALL_PAIRS = {"2": 2, "4": 4, "8": 4, "16": 2}
E5_PUBLISHED_PAIRS = {"52": 52, "104": 104, "208": 104, "512": 64, "2048": 64, "5000": 50}
E5_PUBLISHED_CONF = {
    "max_connections": "10000",
    "shared_buffers": "16GB",
    "huge_pages": "on",
    "synchronous_commit": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
}


def _e5(builtin: str) -> Entry:
    def build(params: Mapping[str, Any]) -> dict[str, Any]:
        return {"builtin": builtin, "query_mode": "prepared", "options": ["-n"], "progress_s": 5}

    return Entry(
        id=f"e5-{'read-only' if builtin == 'select-only' else builtin}",
        experiment="E5",
        title=f"development snapshot against the previous major: {builtin}",
        description=(
            "E5 (13 against 14, both built from the same day's source with --enable-debug, on "
            "a 2 x 26-core KVM guest with 384 GB and 2 NUMA nodes): the builtin "
            f"{builtin} on `pgbench -i -s 1000`, `-M prepared -n -r -P 5`, at clients/threads "
            "52/52, 104/104, 208/104, 512/64, 2048/64 and 5000/50 (the threads policy "
            "'pairs'). Published server settings: max_connections 10000, shared_buffers 16GB, "
            "huge_pages on, synchronous_commit off, wal_level minimal, and more. The published "
            "run used -T 120 up to 512 clients and -T 360 for 2048 and 5000 (the published "
            "job's level_durations). Presented as "
            "a table: connections, tps old, tps new, improvement %."
        ),
        params=(_scale(default=10, published=1000),),
        build=build,
        small_job=JobDefaults(
            clients=[2, 4, 8, 16],
            duration_s=10,
            threads_policy="pairs",
            level_threads=E5_SMALL_PAIRS,
            config_overrides={"synchronous_commit": "off"},
        ),
        published_job=JobDefaults(
            clients=[52, 104, 208, 512, 2048, 5000],
            duration_s=120,
            level_durations={"2048": 360, "5000": 360},
            threads_policy="pairs",
            level_threads=E5_PUBLISHED_PAIRS,
            config_overrides=E5_PUBLISHED_CONF,
        ),
    )


ENTRIES: tuple[Entry, ...] = (
    _builtin("select-only"),
    _builtin("tpcb-like"),
    _builtin("simple-update"),
    _pk_entry(
        entry_id="e1-pk-lookup",
        title="primary-key lookup",
        statement="SELECT * FROM tbl WHERE id = :id;",
        what="W1: select one row by a random primary key.",
    ),
    _pk_entry(
        entry_id="e1-pk-update",
        title="primary-key update",
        statement="UPDATE tbl SET crt_time = now() WHERE id = :id;",
        what="W2: set crt_time = now() on one row chosen by a random primary key.",
    ),
    _insert_entry(entry_id="e1-insert", title="single-row insert", batch=False, per_table=False),
    _insert_entry(entry_id="e1-batch-insert", title="batch insert", batch=True, per_table=False),
    _insert_entry(
        entry_id="e1-insert-per-table",
        title="single-row insert, one table per connection",
        batch=False,
        per_table=True,
    ),
    _insert_entry(
        entry_id="e1-batch-insert-per-table",
        title="batch insert, one table per connection",
        batch=True,
        per_table=True,
    ),
    E2_IDLE,
    E2_SWEEP,
    E3_KEY,
    E4_HEAP,
    _e5("select-only"),
    _e5("tpcb-like"),
)
