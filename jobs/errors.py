"""Platform errors, in the engine's typed-error family so one handler maps them all."""

from ocr_engine.errors import InputError, OcrError

# Upload error policy: codes about the submitted options rather than one file,
# by the form field they belong to (None: the options as a whole). The upload
# page shows them next to that field and tries no further files; the API sends
# the field with the error so the browser's uploader follows the same rule.
OPTION_FIELD_BY_CODE = {"invalid_page_range": "pages", "gpu_required": "pipeline", "unsupported_option": None,
                        "unknown_document_type": "document_type"}


# Page errors caused by an exception in the engine or the platform, whose text can name files, libraries
# and internals: users get the fixed text of its code, the log gets the exception (jobs.services.pages).
FIXED_PAGE_ERRORS = {
    "recognition_failed": "The OCR engine failed on this page. Retrying the job may help.",
    "internal_error": "This page could not be read because of an error on the server. Retrying the job may help.",
}


def error_dict(code: str, detail: str) -> dict | None:
    """The ``error`` member of jobs, pages and webhook payloads: null when there is none."""
    return {"code": code, "detail": detail} if code else None


class JobStateError(OcrError):
    """The job is not in a state that allows this action (e.g. cancel a finished job)."""

    code = "invalid_state"


class UrlNotAllowed(InputError):
    """file_url / webhook_url is not http(s) or points at a private address."""

    code = "url_not_allowed"


class UrlFetchFailed(InputError):
    """The server could not download file_url (network error, HTTP error, time-out)."""

    code = "url_fetch_failed"


class UrlTimedOut(UrlFetchFailed):
    """The exchange with a user-supplied URL did not finish within its deadline."""


class LineNotFound(InputError):
    """A line correction names a line id that is not on the page."""

    code = "line_not_found"


class FieldNotFound(InputError):
    """A field correction names no field of the job's extracted fields (``total``, ``line_items.0.amount``)."""

    code = "field_not_found"


class InvalidFieldValue(InputError):
    """A field correction's value is not of its field's kind (a date that is no date, an amount that is none)."""

    code = "invalid_field_value"


class QuotaExceeded(OcrError):
    """A per-user quota (pages per day, stored bytes) would be exceeded."""

    code = "quota_exceeded"


class StorageFull(OcrError):
    """The server's storage has no room for an upload (disk full or over its quota)."""

    code = "insufficient_storage"


class StoreUnavailable(OcrError):
    """The file store (an S3-compatible one) did not answer within the workers' retries: retry the job."""

    code = "storage_unavailable"


class RegionNotFound(InputError):
    """A review edit names a region id that is not on the page."""

    code = "region_not_found"


# Batches (jobs.services.archives): the first two refuse the whole upload, the others one member of a ZIP,
# which the batch lists in its ``errors`` while the other members go on.
class ArchiveInvalid(InputError):
    """A file sent as a ZIP that is not one, or whose directory cannot be read."""

    code = "invalid_archive"


class ArchiveTooManyMembers(InputError):
    """More files in the ZIP (or the form) than OCR_BATCH_MAX_MEMBERS."""

    code = "archive_too_many_members"


class ArchivePathUnsafe(InputError):
    """A member's name climbs out of the archive (``..``) or is absolute."""

    code = "archive_path_unsafe"


class ArchiveSymlink(InputError):
    """A member is a symbolic link, not a file."""

    code = "archive_symlink"


class ArchiveEncrypted(InputError):
    """A member is encrypted: the server has no password for it."""

    code = "archive_encrypted"


class ArchiveNested(InputError):
    """A member is itself an archive; batches unpack one level only."""

    code = "archive_nested"


class ArchiveBomb(InputError):
    """A member unpacks to far more than it takes in the ZIP, or past the batch's total size."""

    code = "archive_bomb"


class ArchiveUnsupportedCompression(InputError):
    """A member is compressed with a method other than stored or deflated (bzip2, LZMA, zstd...)."""

    code = "archive_unsupported_compression"


class ArchiveNameInvalid(InputError):
    """A member's name is longer than 255 bytes, empty, or holds characters no file name may (NUL, controls)."""

    code = "archive_name_invalid"
