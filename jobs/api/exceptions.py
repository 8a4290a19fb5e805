"""One error shape for the whole API: ``{"code": ..., "detail": ...}`` (+ ``fields`` for form errors).

HTTP status by error code (OcrError codes come from ocr_engine.errors and jobs.errors):

* 413 ``file_too_large``, ``image_too_large``: the upload is over a size limit.
* 415 ``unsupported_file_type``: not a PDF, PNG, JPEG, TIFF, BMP or WebP (by signature).
* 422 ``corrupt_file``, ``encrypted_document``, ``wrong_password``, ``empty_document``,
  ``too_many_pages``, ``page_out_of_range``, ``url_fetch_failed``: the request is well
  formed but the document (or the download) cannot be processed.
* 400 ``invalid_page_range``, ``unsupported_option``, ``gpu_required``, ``url_not_allowed``,
  ``invalid_request`` (form errors, with ``fields``): the request itself is wrong for
  this server; ``gpu_required`` is 400 because ``vl`` is an option this server does not offer.
* 409 ``invalid_state``: e.g. cancel a finished job, retry a job that did not fail.
* 404 ``not_found`` (also for other users' jobs), ``line_not_found`` (a correction names no line
  of the page), 401 ``not_authenticated``.
"""

from __future__ import annotations

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ocr_engine.errors import EngineUnavailable, InputError, OcrError

STATUS_BY_CODE = {
    "file_too_large": 413,
    "image_too_large": 413,
    "unsupported_file_type": 415,
    "corrupt_file": 422,
    "encrypted_document": 422,
    "wrong_password": 422,
    "empty_document": 422,
    "too_many_pages": 422,
    "page_out_of_range": 422,
    "url_fetch_failed": 422,
    "invalid_page_range": 400,
    "unsupported_option": 400,
    "gpu_required": 400,
    "url_not_allowed": 400,
    "invalid_state": 409,
    "line_not_found": 404,
}


def status_for(error: OcrError) -> int:
    if error.code in STATUS_BY_CODE:
        return STATUS_BY_CODE[error.code]
    if isinstance(error, InputError):
        return status.HTTP_400_BAD_REQUEST
    if isinstance(error, EngineUnavailable):
        return status.HTTP_503_SERVICE_UNAVAILABLE
    return status.HTTP_500_INTERNAL_SERVER_ERROR


def exception_handler(exc, context):
    if isinstance(exc, OcrError):
        return Response(exc.to_dict(), status=status_for(exc))
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # unexpected: Django's 500 handling and logging
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        messages = [str(m) for value in fields.values() for m in (value if isinstance(value, list) else [value])]
        response.data = {"code": "invalid_request", "detail": " ".join(messages) or "Invalid request.",
                         "fields": fields}
    elif isinstance(exc, exceptions.APIException):
        response.data = {"code": exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code,
                         "detail": str(exc.detail)}
    else:  # Http404 / PermissionDenied from Django, converted by DRF
        response.data = {"code": "not_found" if response.status_code == 404 else "permission_denied",
                         "detail": str(response.data.get("detail", "")) if isinstance(response.data, dict) else ""}
    return response
