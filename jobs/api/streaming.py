"""Streamed response bodies that stay streamed under ASGI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest


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
