"""``ocr-client mcp``: the OCR server's jobs as MCP tools for an agent (stdio, or streamable HTTP with ``--http``).

The tools call the REST API with the user's own token, so the agent sees what that user may see and
nothing else: over stdio, the operator's OCR_TOKEN, and ``ocr_submit`` may read files of this machine;
over HTTP, each request's own ``Authorization: Token <key>`` (or ``Bearer <key>``) header, never the
operator's token, and no local path is read (``ocr_client.mcp_http``: 401 without a token, Host checks).
The REST API checks the token; this server only passes it on. What each tool does: ``ocr_client.mcp_tools``.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal

import uvicorn  # the server the SDK runs streamable HTTP on (MCPServer.run)
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ocr_client import mcp_tools
from ocr_client.client import Client
from ocr_client.errors import OcrClientError, WaitTimeout
from ocr_client.mcp_http import http_app, token_of

INSTRUCTIONS = """OCR of the user's documents on their OCR server. Submit a file or URL (ocr_submit), wait for it
(ocr_status), then read it (ocr_read), search it or all of the user's documents (ocr_find), take a table
(ocr_table), read its fields (ocr_fields: an invoice's number, total...), or look at the page itself
(ocr_crop). Every line these tools quote comes with its page, its line id and a review link that opens that
line on the page image: cite them with every statement you take from a document, so that a person can check it."""

CITE = ("Each line carries its page, line id and review link (the page image with that line selected): "
        "cite them when you quote or rely on the line.")

JobId = Annotated[str, Field(description="The job's id, as ocr_submit or ocr_find gave it.")]
PageNumber = Annotated[int, Field(ge=1, description="1-based page number of the document.")]
Polygon = list[list[float]]


@contextlib.contextmanager
def _tool_errors():
    """The API's refusals and bad arguments reach the agent as a tool error it can read and act on."""
    try:
        yield
    except OcrClientError as exc:
        raise ToolError(f"{exc.code}: {exc.detail}") from exc
    except mcp_tools.ToolInputError as exc:
        raise ToolError(str(exc)) from exc


def build_server(base_url: str, token: str | None) -> MCPServer:
    """The MCP server whose tools call ``base_url``. ``token``: the operator's, over stdio (``ocr_submit`` may
    then read files of this machine); None over HTTP, where each request's own token is used and no tool
    reads a local path."""
    server = MCPServer("ocr", instructions=INSTRUCTIONS)

    def key_for(ctx: Context) -> str:
        key = token if token is not None else token_of(ctx.headers)
        if not key:  # mcp_http.TokenRequired answers 401 first; this keeps the rule where the token is used
            raise ToolError("No API token: send 'Authorization: Token <key>' to this server.")
        return key

    @contextlib.contextmanager
    def client_for(ctx: Context):
        with _tool_errors(), Client(base_url, key_for(ctx)) as client:
            yield client

    @server.tool(description="Submit a document for OCR: an http(s) URL that the OCR server downloads, or (only "
                             "when this MCP server runs over stdio) an absolute file path on its machine. Answers "
                             "the job's id at once; then call ocr_status with wait_seconds until it is finished, "
                             "and read it with ocr_read, ocr_find, ocr_table or ocr_crop.")
    def ocr_submit(
        source: Annotated[str, Field(description="An http(s) URL, or over stdio a file's path (PDF, PNG, JPEG, "
                                                   "TIFF, ...).")],
        ctx: Context,
        pipeline: Annotated[str | None, Field(description="'ocr' (lines) or 'structure' (layout and tables); "
                                                          "the server's default when omitted.")] = None,
        lang: Annotated[str | None, Field(description="Language code such as 'en', 'de', 'fr'.")] = None,
        pages: Annotated[str | None, Field(description="Pages to read, e.g. '1-3,7'; all when omitted.")] = None,
        text_layer: Annotated[str | None, Field(description="'auto': use a PDF's own text where usable; 'ocr': "
                                                            "OCR every page.")] = None,
        orientation: Annotated[str | None, Field(description="'auto': turn and deskew pages; 'none': pages are "
                                                             "upright.")] = None,
        webhook_url: Annotated[str | None, Field(description="A public http(s) URL the server tells when the job "
                                                             "ends.")] = None,
        document_type: Annotated[str | None, Field(description="The id or name of one of your document types "
                                                               "(which fields to read); classified when omitted.")] = None,
    ) -> dict[str, Any]:
        if not mcp_tools.is_url(source) and token is None:
            # Over HTTP the caller is not the person who started this server: files of this machine are
            # not theirs to upload, whatever their token (refused before the path is touched).
            raise ToolError("Over HTTP, give an http(s) URL: this MCP server reads files of its own machine "
                            "only over stdio, for the person who started it.")
        with client_for(ctx) as client:
            try:
                job = client.submit(source, pipeline=pipeline, lang=lang, pages=pages, text_layer=text_layer,
                                    orientation=orientation, webhook_url=webhook_url, document_type=document_type)
            except OSError as exc:  # the path: missing, a folder, unreadable
                raise ToolError(f"Cannot read {source!r} on the MCP server's machine: {exc.strerror or exc}.") from exc
            return {**mcp_tools.job_status(job), "reused": job.reused}

    @server.tool(description="A job's status (queued, running, succeeded, failed, canceled) and pages done. "
                             "wait_seconds (up to 50) waits for the job to finish first; call again until "
                             "'finished' is true. A failed job says why in 'error'.")
    def ocr_status(
        job: JobId, ctx: Context,
        wait_seconds: Annotated[float, Field(ge=0, le=50, description="Seconds to wait for the job to end.")] = 0,
    ) -> dict[str, Any]:
        with client_for(ctx) as client:
            found = client.job(job)
            if wait_seconds and not found.final:
                with contextlib.suppress(WaitTimeout):
                    found.wait(timeout=wait_seconds)
            return mcp_tools.job_status(found)

    @server.tool(description="A job's text in reading order (while it runs, of the pages done so far), one block per "
                             "region, as plain text or Markdown (titles as headings, lists as items; a table's "
                             "block names the table for ocr_table). " + CITE, structured_output=False)
    def ocr_read(
        job: JobId, ctx: Context,
        pages: Annotated[str | None, Field(description="Page range, e.g. '2' or '1-3'; all pages when omitted.")]
        = None,
        format: Literal["text", "markdown"] = "text",  # noqa: A002 - the word agents read in the schema
    ) -> str:
        with client_for(ctx) as client:
            return mcp_tools.read(client, base_url, job, pages, format)

    @server.tool(description="Search the user's documents (one job, or all of them) for lines holding every word: "
                             "words, \"a phrase\", prefix*. Each hit gives its job, page, line id, text, polygon "
                             "(page-image pixels), confidence, region type and review link. " + CITE)
    def ocr_find(
        query: Annotated[str, Field(description="Words (all must be on the line), \"a phrase\", prefix*.")],
        ctx: Context,
        job: Annotated[str | None, Field(description="Only this job's lines; all the user's jobs when omitted.")]
        = None,
        page: Annotated[int | None, Field(ge=1, description="Only lines on this page number.")] = None,
    ) -> list[dict[str, Any]]:
        with client_for(ctx) as client:
            return mcp_tools.find(client, query, job, page)

    @server.tool(description="The fields read from a job's document (an invoice's number, date, total, vendor, line "
                             "items...): its document type (and whether a user named it or it was classified), "
                             "and each value by its name (line_items.0.amount inside a list) with its confidence, "
                             "'grounded' (false: the value was not found in the lines it cites; 'reason' says why: "
                             "do not rely on it without checking), page, line ids and review link. The fields "
                             "stage runs after OCR: wait_seconds waits while 'status' is pending. " + CITE)
    def ocr_fields(
        job: JobId, ctx: Context,
        wait_seconds: Annotated[float, Field(ge=0, le=50, description="Seconds to wait for the fields stage to "
                                                                      "end.")] = 0,
    ) -> dict[str, Any]:
        with client_for(ctx) as client:
            return mcp_tools.fields(client, base_url, job, wait_seconds)

    @server.tool(description="A table of a page (of a job read with the 'structure' pipeline) as rows of cells, "
                             "each cell with its row, column, spans, text, polygon (page-image pixels), the ids of "
                             "the lines in it and a review link. Without 'table', the page's first table; "
                             "'tables_on_page' names them all.")
    def ocr_table(
        job: JobId, page: PageNumber, ctx: Context,
        table: Annotated[str | None, Field(description="The table's id, e.g. 'p2-t1'.")] = None,
    ) -> dict[str, Any]:
        with client_for(ctx) as client:
            return mcp_tools.table(client, base_url, job, page, table)

    @server.tool(description="Look at the evidence: a PNG of one line (line_id) or of any polygon on a page image, "
                             "with a small margin, and a caption with its page, line id and review link. Use it to "
                             "check a reading you are unsure of (low confidence, odd characters).",
                 structured_output=False)
    def ocr_crop(
        job: JobId, page: PageNumber, ctx: Context,
        line_id: Annotated[str | None, Field(description="A line id from ocr_read or ocr_find, e.g. 'p1-l3'.")]
        = None,
        polygon: Annotated[Polygon | None, Field(description="Or a polygon [[x, y], ...] in page-image pixels.")]
        = None,
    ) -> list[Any]:
        with client_for(ctx) as client:
            png, caption = mcp_tools.crop(client, base_url, job, page, line_id, polygon)
            return [Image(data=png, format="png"), caption]

    return server


def serve(*, base_url: str, token: str | None, http: bool = False, host: str = "127.0.0.1", port: int = 8765,
          allowed_hosts: list[str] | None = None) -> None:
    """Run the MCP server until it is stopped: on stdin/stdout as ``token``, or as streamable HTTP at
    http://host:port/mcp, where ``token`` is not used (``ValueError`` for a non-loopback ``host`` without
    ``allowed_hosts``, before anything is bound)."""
    if not http:
        build_server(base_url, token).run()
        return
    server = build_server(base_url, None)
    uvicorn.run(http_app(server, host, allowed_hosts or []), host=host, port=port,
                log_level=server.settings.log_level.lower())
