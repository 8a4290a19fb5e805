"""Moving a site's stored files to an S3-compatible store (``manage.py ocr_storage_copy --to s3://…``).

The files that rows name (originals, page images and thumbnails) are copied under the same names,
so that the site runs from the store once ``STORAGE_URL`` names it; built exports are not: they
are rebuilt on demand. Each object is read back and its SHA-256 compared with the file's before it
counts as copied, and carries that hash in its metadata: a second run (after an interruption, or
to catch files stored meanwhile) skips the objects whose hash and size match and copies the rest.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from botocore.exceptions import ClientError
from django.conf import settings
from django.core.files.storage import default_storage

from jobs.models import Document, PageResult
from jobs.services.storage import COPY_CHUNK_BYTES
from ocrsite.object_store import default_storage_settings

HASH_METADATA = "sha256"  # x-amz-meta-sha256


@dataclass
class CopyTally:
    copied: int = 0
    already_there: int = 0
    missing: int = 0  # named by a row, not in this site's storage


class CopyMismatch(Exception):
    """An object read back from the store is not the file that was sent."""


def storage_copy(*, to: str, report: Callable[[str], None] = lambda line: None) -> CopyTally:
    """Copy every stored file that a row names from the default storage to the store at ``to``."""
    from storages.backends.s3 import S3Storage

    target = S3Storage(**default_storage_settings(
        to, endpoint_url=settings.S3_ENDPOINT_URL, region=settings.S3_REGION,
        url_seconds=settings.OCR_DOWNLOAD_URL_SECONDS)["OPTIONS"])
    tally = CopyTally()
    for name in _named_files():
        if not default_storage.exists(name):
            tally.missing += 1
            report(f"missing here, not copied: {name}")
            continue
        digest, size = _sha256(name)
        obj = target.bucket.Object(posixpath.join(target.location, name))
        if _holds(obj, digest, size):
            tally.already_there += 1
            continue
        with default_storage.open(name, "rb") as source:
            obj.upload_fileobj(source, ExtraArgs={"Metadata": {HASH_METADATA: digest}})
        if _object_sha256(obj) != digest:
            obj.delete()
            raise CopyMismatch(f"{name}: the store holds other bytes than were sent; run the command again.")
        tally.copied += 1
        report(f"copied {name}")
    return tally


def _named_files() -> Iterator[str]:
    yield from Document.objects.exclude(file="").order_by("pk").values_list("file", flat=True).iterator()
    for image, thumbnail in PageResult.objects.exclude(image="").order_by("pk").values_list(
            "image", "thumbnail").iterator():
        yield image
        if thumbnail:
            yield thumbnail


def _sha256(name: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with default_storage.open(name, "rb") as fh:
        while chunk := fh.read(COPY_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _holds(obj, digest: str, size: int) -> bool:
    """Whether the object is there, copied and checked by an earlier run (its hash and size match)."""
    try:
        obj.load()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise
    return obj.metadata.get(HASH_METADATA) == digest and obj.content_length == size


def _object_sha256(obj) -> str:
    digest = hashlib.sha256()
    for chunk in obj.get()["Body"].iter_chunks(COPY_CHUNK_BYTES):
        digest.update(chunk)
    return digest.hexdigest()
