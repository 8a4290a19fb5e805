"""The ``default`` storage for ``STORAGE_URL``: files under MEDIA_ROOT, or objects in an S3-compatible store.

Read by the settings only. Credentials are not settings: boto3 finds them as it always does
(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment, a profile, or the pod's role).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

FILE_SYSTEM = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
# An S3 file read whole through the storage API (a page image, a small export) spills to a
# temporary file past this size: django-storages' default, 0, keeps it all in memory.
S3_READ_MEMORY_BYTES = 8 * 1024 * 1024


def default_storage_settings(url: str, *, endpoint_url: str | None, region: str | None,
                             url_seconds: int) -> dict:
    """``STORAGES["default"]`` for ``url``: empty for the file system, ``s3://bucket/prefix`` for a bucket."""
    if not url:
        return FILE_SYSTEM
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"STORAGE_URL must look like s3://bucket/prefix, got {url!r}.")
    from botocore.config import Config

    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": parts.netloc,
            "location": parts.path.strip("/"),
            "endpoint_url": endpoint_url or None,
            "region_name": region or None,
            # A name taken gets a new one, as on the file system: a replaced page's old image is
            # deleted after its new one is stored, and must not be the same object.
            "file_overwrite": False,
            "querystring_expire": url_seconds,
            "max_memory_size": S3_READ_MEMORY_BYTES,
            # (django-storages builds its own Config from signature_version and addressing_style only
            # when given none: they are here.) Signature V4, which presigned URLs need on every store;
            # path-style addresses, which MinIO, SeaweedFS, Ceph RGW and Garage answer without a wildcard
            # DNS name. An unreachable store answers within seconds (botocore waits a minute by default);
            # the workers retry a store that is down (OCR_STORE_RETRY_SECONDS).
            "client_config": Config(signature_version="s3v4",
                                    s3={"addressing_style": "path" if endpoint_url else "auto"},
                                    connect_timeout=5, read_timeout=30,
                                    retries={"mode": "standard", "max_attempts": 3}),
        },
    }
