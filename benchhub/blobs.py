"""Large text and JSON values kept in an S3-compatible bucket instead of their rows, when one is
configured (settings: BENCHHUB_BLOB_BUCKET); in the row otherwise, which is the default.

`BlobTextField` and `BlobJSONField` are the model fields of such values (raw pgbench outputs,
folded stacks, imported texts). With a bucket, a value of at least BLOB_MIN_BYTES is written to
the bucket under the SHA-256 of its bytes, and its row holds a reference (`bhblob:sha256:<hex>`
in a text column, `{"bhblob": "sha256:<hex>"}` in a JSON column); loading the row reads the object
back, so code above the models sees the value itself, whatever holds it. Smaller values stay in
their rows. Rows written before the bucket was configured keep their values and are read as
before.

Objects are named by their content: writing the same value twice stores it once, and a retried
write repeats nothing. Deleting a row leaves its object (another row may share it); retention,
which drops whole months of detail, deletes the objects of the rows it dropped that no row left
refers to (results.partitions, `blobs_collect`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.db import models

from benchhub.errors import ApplicationError

STORAGE_ALIAS = "blobs"
MARK = "bhblob:"
TEXT_PREFIX = MARK + "sha256:"
# A value that stays in its row but begins like a reference is stored behind this, so that
# whatever an agent sends reads back as sent.
ESCAPE = MARK + "raw:"
JSON_KEY = "bhblob"


def _bucket_errors() -> tuple[type[Exception], ...]:
    """What a bucket that does not answer raises. botocore is imported only with a bucket
    configured: without one, the web and worker processes do not pay for its import."""
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError, OSError)


class BlobUnavailable(ApplicationError):
    """The bucket cannot be reached, or lacks an object a row refers to (or no bucket is
    configured): a write that needs it is refused as a whole, and an agent retries it later."""

    status = 503


def blob_storage() -> Storage | None:
    """The bucket's storage when one is configured (STORAGES["blobs"]), else None."""
    if STORAGE_ALIAS not in settings.STORAGES:
        return None
    return storages[STORAGE_ALIAS]


def _key(digest: str) -> str:
    return f"sha256/{digest[:2]}/{digest}"


def blob_put(*, data: bytes) -> str | None:
    """Store `data` in the bucket and return its SHA-256 (hex); None when `data` stays in its
    row (no bucket, or smaller than BLOB_MIN_BYTES). Idempotent: an object already there is kept.
    BlobUnavailable when the bucket does not take it.
    """
    storage = blob_storage()
    if storage is None or len(data) < settings.BLOB_MIN_BYTES:
        return None
    digest = hashlib.sha256(data).hexdigest()
    key = _key(digest)
    try:
        if not storage.exists(key):
            storage.save(key, ContentFile(data))
    except _bucket_errors() as exc:
        raise BlobUnavailable(
            "blob_storage_unavailable", f"The bucket for large values refused a write: {exc}"
        ) from exc
    return digest


def blob_get(*, digest: str) -> bytes:
    """The bytes stored under `digest`; BlobUnavailable without a bucket, an answer or the
    object."""
    storage = blob_storage()
    if storage is None:
        raise BlobUnavailable(
            "blob_missing", f"A row refers to blob {digest} but no bucket is configured."
        )
    try:
        with storage.open(_key(digest), "rb") as stored:
            return stored.read()
    except FileNotFoundError:
        raise BlobUnavailable("blob_missing", f"Blob {digest} is not in the bucket.") from None
    except _bucket_errors() as exc:
        raise BlobUnavailable(
            "blob_storage_unavailable", f"The bucket for large values did not answer: {exc}"
        ) from exc


def blob_delete(*, digests: list[str]) -> int:
    """Delete the objects stored under `digests` (hex) from the bucket; returns how many were
    asked to go. Nothing without a bucket. A missing object is not an error: deleting twice is
    harmless. BlobUnavailable when the bucket does not answer."""
    storage = blob_storage()
    if storage is None:
        return 0
    try:
        for digest in digests:
            storage.delete(_key(digest))
    except _bucket_errors() as exc:
        raise BlobUnavailable(
            "blob_storage_unavailable", f"The bucket for large values refused a delete: {exc}"
        ) from exc
    return len(digests)


class BlobTextField(models.TextField):
    """A TextField whose large values live in the bucket when one is configured."""

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        if isinstance(value, str) and value:
            digest = blob_put(data=value.encode())
            if digest is not None:
                value = TEXT_PREFIX + digest
            elif value.startswith(MARK):
                value = ESCAPE + value
        return super().get_db_prep_save(value, connection)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if isinstance(value, str) and value.startswith(TEXT_PREFIX):
            return blob_get(digest=value.removeprefix(TEXT_PREFIX)).decode()
        if isinstance(value, str) and value.startswith(ESCAPE):
            return value.removeprefix(ESCAPE)
        return value


class BlobJSONField(models.JSONField):
    """A JSONField whose large values live in the bucket when one is configured. Its values must
    never be an object whose only key is "bhblob" (the serializers of its fields see to that)."""

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        if isinstance(value, dict | list):
            data = json.dumps(value, cls=self.encoder, separators=(",", ":")).encode()
            digest = blob_put(data=data)
            if digest is not None:
                value = {JSON_KEY: f"sha256:{digest}"}
        return super().get_db_prep_save(value, connection)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        value = super().from_db_value(value, expression, connection)
        if isinstance(value, dict) and len(value) == 1 and JSON_KEY in value:
            digest = str(value[JSON_KEY]).removeprefix("sha256:")
            return json.loads(blob_get(digest=digest), cls=self.decoder)
        return value
