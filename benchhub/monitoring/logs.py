"""JSON logs (LOG_FORMAT=json): one object a line, for a log pipeline to index."""

import json
import logging
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else was passed with `extra=` and is kept.
STANDARD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """time (ISO 8601, UTC), level, logger, message, the exception's traceback when there is
    one, and the fields given with `extra=` (as text when JSON cannot hold them)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key not in STANDARD_ATTRIBUTES and key not in entry:
                entry[key] = value
        return json.dumps(entry, default=str)
