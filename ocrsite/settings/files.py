"""File settings: the project's folders, static files, stored files (the file system or an S3 store) and uploads."""

from __future__ import annotations

from pathlib import Path

from ocrsite.env import env_bool, env_int, env_str
from ocrsite.object_store import default_storage_settings

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [d for d in (BASE_DIR / "static",) if d.is_dir()]
# Stored files (originals, page images, exports, the training set): files under MEDIA_ROOT by default;
# STORAGE_URL=s3://bucket/prefix puts them in an S3-compatible store (S3_ENDPOINT_URL for one that is
# not AWS's, S3_REGION), so that web and worker machines share no disk (docs/operations.md).
STORAGE_URL = env_str("STORAGE_URL", "")
# Downloads of stored files: streamed by the web process after the owner check, or (true) a redirect
# to a presigned URL of the store, valid OCR_DOWNLOAD_URL_SECONDS, which anyone holding it may use.
OCR_DOWNLOAD_REDIRECT = env_bool("OCR_DOWNLOAD_REDIRECT", False)
OCR_DOWNLOAD_URL_SECONDS = env_int("OCR_DOWNLOAD_URL_SECONDS", 300)
S3_ENDPOINT_URL = env_str("S3_ENDPOINT_URL", "")
S3_REGION = env_str("S3_REGION", "")
DEFAULT_STORAGE = default_storage_settings(STORAGE_URL, endpoint_url=S3_ENDPOINT_URL, region=S3_REGION,
                                           url_seconds=OCR_DOWNLOAD_URL_SECONDS)
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "/media/"

# Django refuses request bodies above these; uploads are hashed as they stream in (jobs/uploads.py)
# and spool past the memory threshold on the media volume, so storing one is a rename, not a copy.
# With an object store they spool to the process's own temporary folder and are uploaded from there.
DATA_UPLOAD_MAX_MEMORY_SIZE = FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_HANDLERS = ["jobs.uploads.HashingMemoryFileUploadHandler", "jobs.uploads.HashingTemporaryFileUploadHandler"]
FILE_UPLOAD_TEMP_DIR = None if STORAGE_URL else str(MEDIA_ROOT / ".uploading")
if FILE_UPLOAD_TEMP_DIR:
    Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)  # Django's checks want it to exist
