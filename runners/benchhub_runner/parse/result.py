"""Parse the output of a pgbench benchmark run (9.2 to 18) into a :class:`RunOutput`.

The input is what users capture: stdout and stderr together, in any interleaving (stdout is
block-buffered when redirected, so stderr lines can land anywhere, see the reference notes
§1.1). Each line is therefore classified on its own, never by position. Unknown lines (NOTICEs,
``\\shell`` output, debug lines, fork-specific text) are skipped.

State is kept only where pgbench's text needs it: which ``SQL script N:`` section the `` - ``
lines belong to, and which ``statement latencies`` header (how many integer columns) the
per-command lines follow.
"""

from __future__ import annotations

import re

from .command import CommandLine, command_line_parse
from .errors import PgbenchParseError, never_raises_other
from .run_model import ProgressSample, RunOutput, ScriptStats, StatementLatency
from .text import FLOAT, split_lines, to_float, to_int

_BANNER = re.compile(r"^pgbench \((?P<client>.+?)(?:, server (?P<server>.+))?\)$")
# The --version form; seen mid-output in captures of 14 development builds.
_VERSION = re.compile(r"^pgbench \(PostgreSQL\) (?P<client>\S.*)$")
_PROGRESS = re.compile(
    rf"progress(?: \d+)?: (?P<t>{FLOAT}) s, (?P<tps>{FLOAT}) tps, "
    rf"lat (?P<lat>{FLOAT}) ms stddev (?P<std>{FLOAT})"
    r"(?:, (?P<failed>\d+) failed)?"
    rf"(?:, lag (?P<lag>{FLOAT}) ms)?"
    # 9.5 per-thread lines (thread emulation builds) say "skipped N" the other way round.
    r"(?:, (?P<skipped>\d+) skipped|, skipped (?P<skipped2>\d+))?"
    r"(?:, (?P<retried>\d+) retried, (?P<retries>\d+) retries)?$"
)
_TEXT_KEYS = {
    "transaction type": "transaction_type",
    "partition method": "partition_method",
    "query mode": "query_mode",
}
_INT_KEYS = {
    "scaling factor": "scaling_factor",
    "partitions": "partitions",
    "number of clients": "clients",
    "number of threads": "threads",
    "maximum number of tries": "max_tries",
    "number of transactions per client": "transactions_per_client",
    "total number of retries": "total_retries",
}
_KEY_VALUE = re.compile(r"^(?P<key>[a-z][a-z ]+?): (?P<value>\S.*)$")
_DURATION = re.compile(r"^duration: (\d+) s$")
_PROCESSED = re.compile(r"^number of transactions actually processed: (\d+)(?:/(\d+))?$")
_COUNTS = {
    "failed transactions": "failed_transactions",
    "serialization failures": "serialization_failures",
    "deadlock failures": "deadlock_failures",
    "transactions retried": "retried_transactions",
    "transactions skipped": "skipped_transactions",
}
_COUNT = re.compile(r"^number of (?P<kind>[a-z ]+): (?P<n>\d+)(?: \(.*\))?$")
_LATE = re.compile(
    rf"^number of transactions above the (?P<limit>{FLOAT}) ms latency limit: "
    r"(?P<late>\d+)(?:/\d+)?(?: \(.*\))?$"
)
_LATENCY = re.compile(
    rf"^latency (?P<kind>average|stddev)(?:: | = )(?P<v>{FLOAT}) ms"
    r"(?P<fail> \(including failures\))?$"
)
_LAG = re.compile(rf"^rate limit schedule lag: avg (?P<avg>{FLOAT}) \(max (?P<max>{FLOAT})\) ms$")
_CONNECTION = re.compile(rf"^(?P<kind>initial|average) connection time = (?P<v>{FLOAT}) ms$")
_TPS = re.compile(rf"^tps = (?P<v>{FLOAT}) \((?P<kind>[a-z ]+)\)$")
_TPS_WITHOUT = {"excluding connections establishing", "without initial connection time"}
_TPS_WITH = {"including connections establishing", "including reconnection times"}

_SCRIPT_HEADER = re.compile(r"^SQL script (?P<n>\d+): (?P<name>.*)$")
_STATEMENT_HEADER = re.compile(
    r"^(?: - )?statement latencies in milliseconds(?P<rest>(?: and failures|, failures and "
    r"retries|, file (?P<file>\d+))?):$"
)
_SUB_WEIGHT = re.compile(r"^ - weight: (\d+)")
_SUB_TRANSACTIONS = re.compile(rf"^ - (\d+) transactions \(.*?(?:, tps = (?P<tps>{FLOAT}))?\)$")
_SUB_PROCESSED = re.compile(
    rf"^ - number of transactions actually processed: (\d+) \(tps = (?P<tps>{FLOAT})\)$"
)
_SUB_COUNT = re.compile(r"^ - number of (?P<kind>[a-z ]+): (?P<n>\d+)")
_SUB_LATENCY = re.compile(rf"^ - latency (?P<kind>average|stddev) = (?P<v>{FLOAT}) ms")
_TAB_STATEMENT = re.compile(rf"^\t(?P<ms>{FLOAT})\t(?P<cmd>.*)$")

_RUN_ABORTED = re.compile(r"Run was aborted.*$")
_CLIENT_ABORT = re.compile(r"^(?:\S+: (?:error|fatal): )?[Cc]lient \d+ .*aborted")
_ERROR = re.compile(
    r"^(?:\S+: (?:error|fatal): |(?:ERROR|FATAL|PANIC):  |[Cc]onnection to database )"
)
_CONTINUATION = re.compile(
    r"^(?:LINE \d+: |DETAIL:  |HINT:  |CONTEXT:  |QUERY:  |\s+\^$|\S+: (?:detail|hint): |"
    r"\(ignoring this error|\t[A-Za-z])"
)


def _statement_pattern(int_columns: int) -> re.Pattern[str]:
    """Per-command line of 9.6+ with 0, 1 (failures) or 2 (failures, retries) int columns.

    15-17 put two spaces before the command and between columns, 18 only one (see §3.11).
    """
    ints = "".join([r"\s+(?P<failures>\d+)", r"\s+(?P<retries>\d+)"][:int_columns])
    return re.compile(rf"^ +(?P<ms>{FLOAT}){ints} {{1,2}}(?P<cmd>\S.*)$")


_STATEMENT_PATTERNS = {n: _statement_pattern(n) for n in (0, 1, 2)}


class _RunParser:
    """Line-by-line state machine filling one :class:`RunOutput`."""

    def __init__(self) -> None:
        self.out = RunOutput()
        self.found_results = False
        self.script: ScriptStats | None = None
        self.statement_columns: int | None = None
        self.statement_script = 1
        self.last_error_open = False
        self.command: CommandLine | None = None

    def feed(self, line: str) -> None:
        continued = self.last_error_open and bool(_CONTINUATION.match(line))
        self.last_error_open = False
        if continued:
            self.out.errors[-1] += "\n" + line
            self.last_error_open = True
        elif not line:
            return
        elif line[0] in " \t":
            self._indented(line)
        else:
            self._flush_left(line)

    def _flush_left(self, line: str) -> None:
        if self.command is None and (command := command_line_parse(line)) is not None:
            self.command = command
            return
        if self._banner(line) or self._progress(line) or self._errors(line):
            return
        if self._section_header(line) or self._result_line(line):
            self.found_results = True

    def _banner(self, line: str) -> bool:
        match = _VERSION.match(line) or _BANNER.match(line)
        if match is None:
            return False
        if self.out.pgbench_version is None:
            self.out.pgbench_version = match["client"]
            self.out.server_version = match.groupdict().get("server")
        return True

    def _progress(self, line: str) -> bool:
        match = _PROGRESS.search(line)
        if match is None:
            return False
        skipped = match["skipped"] or match["skipped2"]
        self.out.progress.append(
            ProgressSample(
                t=to_float(match["t"]),
                tps=to_float(match["tps"]),
                latency_ms=to_float(match["lat"]),
                stddev_ms=to_float(match["std"]),
                failed=_opt_int(match["failed"]),
                skipped=_opt_int(skipped),
                lag_ms=None if match["lag"] is None else to_float(match["lag"]),
                retried=_opt_int(match["retried"]),
                retries=_opt_int(match["retries"]),
            )
        )
        return True

    def _errors(self, line: str) -> bool:
        aborted_run = _RUN_ABORTED.search(line)
        client_abort = _CLIENT_ABORT.match(line)
        if aborted_run is None and client_abort is None and not _ERROR.match(line):
            return False
        if aborted_run or client_abort:
            self.out.aborted = True
        # In <= 12 captures "Run was aborted" can be spliced into the middle of a stdout line;
        # then only that part is the message.
        text = line
        if aborted_run and aborted_run.start() > 0 and not (client_abort or _ERROR.match(line)):
            text = line[aborted_run.start() :]
        self.out.errors.append(text)
        self.last_error_open = True
        return True

    def _section_header(self, line: str) -> bool:
        if match := _SCRIPT_HEADER.match(line):
            self.script = ScriptStats(number=to_int(match["n"]), name=match["name"])
            self.out.scripts.append(self.script)
            self.statement_columns = None
            return True
        if line == "script statistics:":  # 9.6-10, a single script: no per-script entry
            self.script = None
            return True
        if line.startswith(" - ") or line.startswith("statement latencies"):
            return self._sub_line(line)
        return False

    def _sub_line(self, line: str) -> bool:
        if match := _STATEMENT_HEADER.match(line):
            rest = match["rest"]
            self.statement_columns = 2 if "retries" in rest else 1 if "failures" in rest else 0
            if match["file"] is not None:  # <= 9.5, several -f files
                self.statement_columns = -1
                self.statement_script = to_int(match["file"])
            else:
                self.statement_script = self.script.number if self.script else 1
            return True
        if self.script is not None:
            _script_sub_line(self.script, line)
        return True

    def _indented(self, line: str) -> None:
        if line.startswith(" - "):
            self._sub_line(line)
        elif self.statement_columns is not None:
            self._statement(line)

    def _statement(self, line: str) -> None:
        columns = self.statement_columns
        match = _TAB_STATEMENT.match(line)
        if match is None and columns is not None and columns >= 0:
            match = _STATEMENT_PATTERNS[columns].match(line)
        if match is None:
            return
        found = match.groupdict()
        self.out.statements.append(
            StatementLatency(
                latency_ms=to_float(found["ms"]),
                failures=_opt_int(found.get("failures")),
                retries=_opt_int(found.get("retries")),
                command=found["cmd"],
                script=self.statement_script,
            )
        )

    def _result_line(self, line: str) -> bool:
        return any(
            handler(self.out, line)
            for handler in (_key_value, _processed, _count, _latency, _tps, _other_result)
        )


def _opt_int(text: str | None) -> int | None:
    return None if text is None else to_int(text)


def _script_sub_line(script: ScriptStats, line: str) -> None:
    if match := _SUB_WEIGHT.match(line):
        script.weight = to_int(match[1])
    elif match := _SUB_TRANSACTIONS.match(line):
        script.transactions = to_int(match[1])
        script.tps = None if match["tps"] is None else to_float(match["tps"])
    elif match := _SUB_PROCESSED.match(line):
        # 18: "N transactions" above counted failed and skipped too; this is the successful count.
        script.all_transactions = script.transactions
        script.transactions = to_int(match[1])
        script.tps = to_float(match["tps"])
    elif match := _SUB_COUNT.match(line):
        attribute = _COUNTS.get(match["kind"])
        if attribute in ("failed_transactions", "skipped_transactions", "retried_transactions"):
            setattr(script, attribute, to_int(match["n"]))
    elif match := _SUB_LATENCY.match(line):
        kind = "latency_avg_ms" if match["kind"] == "average" else "latency_stddev_ms"
        setattr(script, kind, to_float(match["v"]))


def _key_value(out: RunOutput, line: str) -> bool:
    match = _KEY_VALUE.match(line)
    if match is None:
        return False
    key, value = match["key"], match["value"]
    if key in _TEXT_KEYS:
        setattr(out, _TEXT_KEYS[key], value)
        return True
    if key in _INT_KEYS and value.isdigit():
        setattr(out, _INT_KEYS[key], to_int(value))
        return True
    if duration := _DURATION.match(line):
        out.duration_s = to_int(duration[1])
        return True
    return False


def _processed(out: RunOutput, line: str) -> bool:
    match = _PROCESSED.match(line)
    if match is None:
        return False
    out.transactions = to_int(match[1])
    out.planned_transactions = _opt_int(match[2])
    return True


def _count(out: RunOutput, line: str) -> bool:
    match = _COUNT.match(line)
    if match is None or match["kind"] not in _COUNTS:
        return False
    setattr(out, _COUNTS[match["kind"]], to_int(match["n"]))
    return True


def _latency(out: RunOutput, line: str) -> bool:
    match = _LATENCY.match(line)
    if match is None:
        return False
    if match["kind"] == "average":
        out.latency_avg_ms = to_float(match["v"])
        out.latency_includes_failures = match["fail"] is not None
    else:
        out.latency_stddev_ms = to_float(match["v"])
    return True


def _tps(out: RunOutput, line: str) -> bool:
    match = _TPS.match(line)
    if match is None:
        return False
    if match["kind"] in _TPS_WITHOUT:
        out.tps = to_float(match["v"])
    elif match["kind"] in _TPS_WITH:
        out.tps_including_connections = to_float(match["v"])
    return True


def _other_result(out: RunOutput, line: str) -> bool:
    if match := _LATE.match(line):
        out.latency_limit_ms = to_float(match["limit"])
        out.late_transactions = to_int(match["late"])
    elif match := _LAG.match(line):
        out.rate_lag_avg_ms = to_float(match["avg"])
        out.rate_lag_max_ms = to_float(match["max"])
    elif match := _CONNECTION.match(line):
        attribute = "initial" if match["kind"] == "initial" else "average"
        setattr(out, f"{attribute}_connection_time_ms", to_float(match["v"]))
    else:
        return False
    return True


def _incomplete_with_t(out: RunOutput) -> bool:
    """With ``-t``, fewer finished transactions than planned means clients gave up (§11.6)."""
    if out.planned_transactions is None or out.transactions is None:
        return False
    done = out.transactions + (out.failed_transactions or 0) + (out.skipped_transactions or 0)
    return done < out.planned_transactions


@never_raises_other
def parse_run_output(text: str) -> RunOutput:
    """Parse the combined stdout+stderr of one pgbench benchmark run (any version 9.2-18).

    Raises :class:`PgbenchParseError` when the text holds none of a version banner, a
    ``progress:`` line or a results block, i.e. when it is not pgbench run output at all.
    A run that aborted still parses, with ``aborted=True`` and the messages in ``errors``.
    The text may be pasted (indented, quoted, fenced, summary lines joined: see
    :mod:`.pasted`) or a fragment (``tail``, a cut header). Where the output does not print the
    clients, threads, duration or builtin but a pasted ``pgbench ...`` command line does, those
    come from the command line.
    """
    parser = _RunParser()
    for line in split_lines(text):
        parser.feed(line)
    out = parser.out
    if out.pgbench_version is None and not out.progress and not parser.found_results:
        raise PgbenchParseError(
            "not pgbench run output: no version banner ('pgbench (X)'), no 'progress:' line "
            "and no results block ('transaction type: ...', 'tps = ...') found"
        )
    if parser.command is not None:
        parser.command.fill(out)
    if _incomplete_with_t(out):
        out.aborted = True
    return out
