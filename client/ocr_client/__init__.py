"""Python client of the OCR platform's API: submit documents, follow their progress, read typed results.

    from ocr_client import Client

    with Client("http://127.0.0.1:8000", "TOKEN") as client:
        job = client.submit("scan.pdf", pipeline="ocr", lang="en")
        job.wait(on_progress=print)
        for page in job.result().pages:
            for line in page.lines:
                print(line.id, line.text, line.polygon)

``AsyncClient`` has the same methods, awaited. Every error is an ``OcrClientError`` carrying the
server's ``code``, ``detail`` and HTTP ``status``. The command line ``ocr-client`` is ``ocr_client.cli``.
"""

from ocr_client._core import RetryPolicy
from ocr_client.aio import AsyncClient, AsyncJob
from ocr_client.client import Client, Job
from ocr_client.errors import (
    AuthError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    ForeignLink,
    NotFound,
    OcrClientError,
    RateLimited,
    Refused,
    SchemaMismatch,
    ServerError,
    ServerUnavailable,
    WaitTimeout,
)
from ocr_client.fields import DocumentTypeAssignment, Evidence, Field, Fields
from ocr_client.models import (
    SCHEMA_VERSION,
    Correction,
    EditAnswer,
    EngineInfo,
    Line,
    Page,
    Progress,
    Region,
    Result,
    SearchHit,
    Table,
    TableCell,
    Word,
)
from ocr_client.version import __version__

__all__ = [
    "AsyncClient", "AsyncJob", "AuthError", "BadRequest", "Client", "Conflict", "ConnectionFailed", "Correction",
    "DocumentTypeAssignment", "EditAnswer", "EngineInfo", "Evidence", "Field", "Fields", "ForeignLink", "Job", "Line",
    "NotFound", "OcrClientError", "Page", "Progress", "RateLimited", "Refused", "Region", "Result", "RetryPolicy",
    "SCHEMA_VERSION", "SchemaMismatch", "SearchHit", "ServerError", "ServerUnavailable", "Table", "TableCell",
    "WaitTimeout", "Word", "__version__",
]
