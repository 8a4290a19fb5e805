"""Streamed response bodies that stay streamed under ASGI; downloads of stored files."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.files.storage import default_storage
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, HttpResponseRedirect, StreamingHttpResponse
from django.utils.http import content_disposition_header

from jobs.services.storage import storage_is_local, stored_chunks, stored_url


def stored_download(request, name: str, *, content_type: str, filename: str):
    """The stored file ``name`` as a download, once the caller checked that the user may have it.

    With OCR_DOWNLOAD_REDIRECT and an object store: a redirect to a presigned URL of the store,
    which takes the transfer off the web process but lets anyone who holds the URL download the file
    until it expires (OCR_DOWNLOAD_URL_SECONDS). Otherwise streamed from the storage.
    """
    url = stored_url(name, filename=filename, content_type=content_type)
    if url is not None:
        return HttpResponseRedirect(url)
    if storage_is_local():
        response = FileResponse(default_storage.open(name, "rb"), content_type=content_type)
    else:
        chunks, size = stored_chunks(name)
        response = StreamingHttpResponse(stream_for(request, chunks), content_type=content_type)
        response["Content-Length"] = str(size)
    # RFC 6266 encoding: a user's file name with quotes, semicolons or non-ASCII
    # characters cannot add parameters to the header.
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def stream_for(request, chunks: Iterator[bytes]) -> Iterator[bytes] | AsyncIterator[bytes]:
    """``chunks`` as the server in front of Django can send them one by one.

    Django's ASGI handler collects a synchronous iterator whole before sending any of it
    (``StreamingHttpResponse.__aiter__``), which is the memory a stream is meant to save; under
    ASGI each chunk is made on the request's own thread instead, where its database queries belong.
    """
    if isinstance(getattr(request, "_request", request), ASGIRequest):  # a DRF Request wraps Django's
        return _made_on_the_request_thread(chunks)
    return chunks


async def _made_on_the_request_thread(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    step = sync_to_async(next, thread_sensitive=True)
    try:
        while (chunk := await step(chunks, None)) is not None:
            yield chunk
    finally:  # a client that went away: the generator's queries and files are closed now, not when collected
        await sync_to_async(chunks.close, thread_sensitive=True)()
