"""A claim's JSON read field by field: each value checked for its type and bounds, and the
error that names the field at fault by its path (`workload.streams[1].clients`)."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, TypeVar

Choice = TypeVar("Choice", bound=StrEnum)


class JobSpecError(ValueError):
    """The claim is not a job the agent can run; `field` is the path of the value at fault and
    `job_id` the job's id when the claim had a readable one (so the failure can be reported)."""

    def __init__(self, field: str, message: str, *, job_id: int | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.job_id = job_id


def show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_integer(value: object, path: str, *, minimum: int = 1) -> int:
    # bool is an int to Python, never to JSON.
    if not isinstance(value, int) or isinstance(value, bool):
        raise JobSpecError(path, f"expected an integer, got {show(value)}")
    if value < minimum:
        raise JobSpecError(path, f"expected at least {minimum}, got {value}")
    return value


def read_number(value: object, path: str, *, allow_zero: bool = False) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise JobSpecError(path, f"expected a number, got {show(value)}")
    if value < 0 or (value == 0 and not allow_zero):
        least = "at least 0" if allow_zero else "more than 0"
        raise JobSpecError(path, f"expected {least}, got {value}")
    return float(value)


def read_text(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise JobSpecError(path, f"expected a string, got {show(value)}")
    return value


class JsonObject:
    """One JSON object of the claim at `path`, read field by field."""

    def __init__(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise JobSpecError(path or "job", f"expected an object, got {show(value)}")
        self.value: dict[str, Any] = value
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, *, required: bool) -> object:
        value = self.value.get(key)
        if value is None and required:
            raise JobSpecError(self.at(key), "is missing" if key not in self.value else "is null")
        return value

    def integer(self, key: str, *, default: int | None = None, minimum: int = 1) -> int:
        value = self._get(key, required=default is None)
        return (
            default
            if value is None and default is not None
            else read_integer(value, self.at(key), minimum=minimum)
        )

    def optional_integer(self, key: str, *, minimum: int = 1) -> int | None:
        value = self._get(key, required=False)
        return None if value is None else read_integer(value, self.at(key), minimum=minimum)

    def optional_number(self, key: str, *, allow_zero: bool = False) -> float | None:
        value = self._get(key, required=False)
        if value is None:
            return None
        return read_number(value, self.at(key), allow_zero=allow_zero)

    def text(self, key: str, *, default: str | None = None) -> str:
        value = self._get(key, required=default is None)
        return default if value is None and default is not None else read_text(value, self.at(key))

    def optional_text(self, key: str) -> str | None:
        value = self._get(key, required=False)
        return None if value is None else read_text(value, self.at(key))

    def boolean(self, key: str, *, default: bool) -> bool:
        value = self._get(key, required=False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise JobSpecError(self.at(key), f"expected true or false, got {show(value)}")
        return value

    def choice(self, key: str, choices: tuple[Choice, ...], *, default: Choice) -> Choice:
        value = self.text(key, default=str(default))
        for choice in choices:
            if value == choice:
                return choice
        raise JobSpecError(self.at(key), f"expected one of {', '.join(choices)}, got {show(value)}")

    def items(self, key: str, *, required: bool = False) -> list[tuple[str, object]]:
        """The entries of a list field with their paths; absent or null is empty unless
        required, and a required list must not be empty."""
        value = self._get(key, required=required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise JobSpecError(self.at(key), f"expected a list, got {show(value)}")
        if required and not value:
            raise JobSpecError(self.at(key), "is empty")
        return [(f"{self.at(key)}[{index}]", item) for index, item in enumerate(value)]

    def child(self, key: str, *, default: dict[str, Any] | None = None) -> JsonObject:
        value = self._get(key, required=default is None)
        return JsonObject(default if value is None else value, self.at(key))
