"""The domain's one error type: a request the domain refuses, with what the caller needs to know.

Services, selectors and pure code raise an ApplicationError (a subclass of it) instead of knowing
how it is shown: the API's exception handler (api.errors) renders every one in the error shape
`{"error": code, "detail": detail, "fields": {field: [detail]}}` with its status, and pages catch
it to show `detail` as a message. A new refusal is one line where it happens:

    raise JobError("no_such_host", f"No host named {name!r}.", field="host")

`code` is part of the API contract (docs/runner-api.md): agents and scripts branch on it, so keep
it stable; `detail` is one sentence for a person. `field` names the request field at fault by its
path in the request (`host.name`, `results[2].tps`). `status` is the HTTP status the API answers
with; a subclass states its usual one, and a raise may say otherwise. A refusal that hands the
caller data to act on (what an import read, so the caller can complete it) puts it in `extra`,
whose keys the handler adds to the body beside `error`, `detail` and `fields`.
"""

from typing import Any


class ApplicationError(Exception):
    """Base of every refusal the domain raises. Subclasses set `status` (default 400)."""

    status: int = 400
    extra: dict[str, Any] = {}  # read only; an instance sets its own

    def __init__(
        self, code: str, detail: str, *, field: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.field = field
        if status is not None:
            self.status = status

    @property
    def fields(self) -> dict[str, list[str]]:
        """The field errors of the API's shape: {field: [detail]}, or none."""
        return {self.field: [self.detail]} if self.field else {}
