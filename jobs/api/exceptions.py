"""One error shape for the whole API: ``{"code": ..., "detail": ...}`` (+ ``fields`` for form errors,
+ ``field`` for errors about one submitted option, see ``jobs.errors.OPTION_FIELD_BY_CODE``).

HTTP status by error code (OcrError codes come from ocr_engine.errors and jobs.errors):

* 413 ``file_too_large``, ``image_too_large``: the upload is over a size limit.
* 415 ``unsupported_file_type``: not a PDF, PNG, JPEG, TIFF, BMP or WebP (by signature).
* 422 ``corrupt_file``, ``encrypted_document``, ``wrong_password``, ``empty_document``,
  ``too_many_pages``, ``page_out_of_range``, ``url_fetch_failed``: the request is well
  formed but the document (or the download) cannot be processed.
* 400 ``invalid_page_range``, ``unsupported_option``, ``gpu_required``, ``url_not_allowed``,
  ``invalid_request`` (form errors, with ``fields``): the request itself is wrong for
  this server; ``gpu_required`` is 400 because ``vl`` is an option this server does not offer.
  400 ``parse_error``: the body is not JSON, or nested too deeply to parse (``jobs.api.parsers``).
  400 ``invalid_archive``, ``archive_too_many_members``: a batch's ZIP is not one, or holds too many files.
  A batch's refused members (``archive_*`` and the upload codes) are listed in the batch, not answered here.
* 429 ``quota_exceeded`` (a per-user quota), ``throttled`` (rate limit; with ``Retry-After``).
* 507 ``insufficient_storage``: the server's disk is full; nothing was stored.
* 503 ``storage_unavailable``: the file store (``STORAGE_URL``) did not answer; try again later.
* 409 ``invalid_state``: e.g. cancel a finished job, retry a job that did not fail.
* 404 ``not_found`` (also for other users' jobs), ``line_not_found`` (a correction names no line
  of the page), ``field_not_found`` (a field correction names no extracted field), 401 ``not_authenticated``.
  400 ``invalid_field_value``: a field correction's value is not of its field's kind.
"""

from __future__ import annotations

import logging

from django.http import JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from jobs.errors import OPTION_FIELD_BY_CODE, StoreUnavailable
from jobs.services.storage import store_unavailable
from ocr_engine.errors import EngineUnavailable, InputError, OcrError

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
# What an API client is told of a failure it cannot fix: no exception text, no
# SQL, no host names; the log has the traceback.
SERVER_ERROR = {"code": "server_error", "detail": "The server failed to handle this request; try again later."}
NOT_FOUND = {"code": "not_found", "detail": "No such resource."}

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
    "quota_exceeded": 429,
    "insufficient_storage": 507,
    "storage_unavailable": 503,
    "region_not_found": 404,
    "field_not_found": 404,
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
    if not isinstance(exc, OSError) and store_unavailable(exc):  # the object store is down (botocore retried)
        logger.warning("The file store failed: %s", exc)
        exc = StoreUnavailable("The file store did not answer; try again in a minute.")
    if isinstance(exc, OcrError):
        body = exc.to_dict()
        if exc.code in OPTION_FIELD_BY_CODE:
            body["field"] = OPTION_FIELD_BY_CODE[exc.code]  # the option at fault (null: the options together)
        return Response(body, status=status_for(exc))
    response = drf_exception_handler(exc, context)
    if response is None:
        request = context.get("request")
        logger.exception("Unhandled error on %s", request.path if request is not None else "the API", exc_info=exc)
        return Response(SERVER_ERROR, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
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


# Root URLconf handlers (ocrsite/urls.py): under /api/ the answer is always the
# API's JSON error shape, for unknown routes and for errors outside DRF views too.
def handler404(request, exception=None):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(NOT_FOUND, status=404)
    return defaults.page_not_found(request, exception)


def handler500(request):
    if request.path.startswith(API_PREFIX):
        return JsonResponse(SERVER_ERROR, status=500)
    return defaults.server_error(request)
