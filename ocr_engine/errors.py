"""Typed errors with stable codes.

Every failure a user can cause (bad file, bad option) is an ``OcrError`` whose
``code`` never changes between releases, so API clients and the CLI can branch
on it. The web layer maps codes to HTTP statuses; the engine knows no HTTP.
"""

from __future__ import annotations


class OcrError(Exception):
    """Base error: ``code`` is stable and machine-readable, ``message`` is for people."""

    code = "ocr_error"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.message}


class InputError(OcrError):
    """The document or an option is unusable; retrying will not help."""

    code = "invalid_input"


class UnsupportedFileType(InputError):
    code = "unsupported_file_type"


class CorruptFile(InputError):
    code = "corrupt_file"


class EncryptedDocument(InputError):
    code = "encrypted_document"


class WrongPassword(InputError):
    code = "wrong_password"


class EmptyDocument(InputError):
    code = "empty_document"


class TooManyPages(InputError):
    code = "too_many_pages"


class FileTooLarge(InputError):
    code = "file_too_large"


class ImageTooLarge(InputError):
    """More pixels than the limit: guards against decompression bombs."""

    code = "image_too_large"


class InvalidPageRange(InputError):
    code = "invalid_page_range"


class PageOutOfRange(InputError):
    code = "page_out_of_range"


class UnsupportedOption(InputError):
    """Unknown pipeline, language, backend or export format."""

    code = "unsupported_option"


class EngineUnavailable(OcrError):
    """The engine cannot run here: missing models, no GPU for ``vl``, missing package."""

    code = "engine_unavailable"


class ModelsMissing(EngineUnavailable):
    code = "models_missing"


class GpuRequired(EngineUnavailable):
    code = "gpu_required"


class RecognitionFailed(OcrError):
    """The OCR engine raised while processing a page; may be worth a retry."""

    code = "recognition_failed"
