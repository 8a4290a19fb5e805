"""``ocr-client``: the command line over ``Client``.

    ocr-client submit scans/ --pipeline ocr --lang en --wait --format md,txt -o out/
    ocr-client status JOB [--wait]      ocr-client result JOB [--json]
    ocr-client export JOB FORMAT [-o PATH]    ocr-client cancel JOB    ocr-client search QUERY
    ocr-client mcp [--http]             (the MCP server for agents: the ``mcp`` extra)

The server and token come from --url/--token, ``OCR_URL``/``OCR_TOKEN``, or the config file
(``ocr_client.config``). Exit status: 0 done; 1 a file or job refused or failed; 2 bad usage or
settings; 3 the token was refused; 4 the server could not be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ocr_client import config
from ocr_client.bulk_submit import EXPORT_ALIASES, FIELDS_FORMAT, FIELDS_WAIT, BulkSubmit, sources, write_fields
from ocr_client.client import Client
from ocr_client.errors import AuthError, ConnectionFailed, OcrClientError
from ocr_client.version import __version__

EXIT_FAILED, EXIT_USAGE, EXIT_AUTH, EXIT_UNREACHABLE = 1, 2, 3, 4
FINAL = ("succeeded", "failed", "canceled")


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="ocr-client", description="Submit documents to the OCR platform and read "
                                   "their results. Settings: --url/--token, OCR_URL/OCR_TOKEN, or "
                                   f"{config.config_path()} (url = ..., token = ...).")
    main.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    main.add_argument("--url", help="the server, e.g. http://127.0.0.1:8000 (default: $OCR_URL)")
    main.add_argument("--token", help="your API token (default: $OCR_TOKEN)")
    main.add_argument("--config", type=Path, help="a TOML config file with url and token")
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")

    submit = commands.add_parser("submit", help="submit files and folders (resumable)")
    submit.add_argument("paths", nargs="+", type=Path, metavar="FILES_OR_DIRS")
    submit.add_argument("--pipeline", help="ocr, structure or vl (the server's default: structure)")
    submit.add_argument("--lang", help="language code, e.g. en, de, fr")
    submit.add_argument("--pages", help='pages to read, e.g. "1-3,7"')
    submit.add_argument("--text-layer", choices=["auto", "ocr"])
    submit.add_argument("--orientation", choices=["auto", "none"])
    submit.add_argument("--webhook-url")
    submit.add_argument("--document-type", help="the id or name of one of your document types (default: the "
                        "server classifies each document)")
    submit.add_argument("--wait", action="store_true", help="wait for every job to end (implied by --format)")
    submit.add_argument("--format", default="", help="exports to write when a job succeeds, e.g. md,txt "
                        "(txt md json hocr alto pdf page, pdfa: the PDF as PDF/A-2b, NAME.pdfa.pdf, and "
                        "fields.json: the document type and fields, NAME.fields.json)")
    submit.add_argument("-o", "--out", type=Path, default=Path("."), metavar="OUT_DIR",
                        help="where exports and the resume state go (default: the current folder)")
    submit.add_argument("-j", "--concurrency", type=int, default=4, help="files in flight at once (default 4)")
    submit.add_argument("--timeout", type=float, help="seconds to wait for each job")
    submit.add_argument("--no-progress", action="store_true", help="no progress bars (default: on a terminal)")

    status = commands.add_parser("status", help="a job's status and progress")
    status.add_argument("job")
    status.add_argument("--wait", action="store_true", help="wait until it ends")
    status.add_argument("--json", action="store_true", help="the server's whole answer")

    result = commands.add_parser("result", help="a job's text (or its normalized result with --json)")
    result.add_argument("job")
    result.add_argument("--json", action="store_true")

    export = commands.add_parser("export", help="download an export of a job")
    export.add_argument("job")
    export.add_argument("format", help="txt md json hocr alto pdf page pdfa fields.json")
    export.add_argument("-o", "--out", type=Path, help="file to write (default: standard output)")

    cancel = commands.add_parser("cancel", help="cancel a queued or running job")
    cancel.add_argument("job")

    search = commands.add_parser("search", help="search your results")
    search.add_argument("query")
    search.add_argument("--job")
    search.add_argument("--page", type=int)
    search.add_argument("--limit", type=int, default=50)
    search.add_argument("--json", action="store_true")

    mcp = commands.add_parser("mcp", help="serve your jobs to an agent as MCP tools (stdio; --http: streamable HTTP)")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="--http's address (default 127.0.0.1; any other needs "
                     "--allowed-host, and belongs behind a TLS proxy)")
    mcp.add_argument("--port", type=int, default=8765, help="--http's port (default 8765)")
    mcp.add_argument("--allowed-host", action="append", default=[], dest="allowed_hosts", metavar="NAME[:PORT]",
                     help="a Host header --http accepts (repeatable): the names clients reach it by")
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        # Over HTTP the MCP server takes each request's own token, never one of its own.
        settings = config.load(args.url, args.token, args.config,
                               token_needed=not (args.command == "mcp" and args.http))
    except config.ConfigError as error:
        return fail(str(error), EXIT_USAGE)
    try:
        with Client(settings.url, settings.token) as client:
            return COMMANDS[args.command](client, args)
    except AuthError as error:
        return fail(f"the server refused this request: {error.detail} ({error.status} {error.code}); "
                    "check OCR_TOKEN / --token", EXIT_AUTH)
    except ConnectionFailed as error:
        return fail(f"{error.detail}; is the server running and OCR_URL right?", EXIT_UNREACHABLE)
    except OcrClientError as error:
        return fail(f"{error.detail} ({error.status or ''} {error.code})".replace("( ", "("), EXIT_FAILED)
    except (FileNotFoundError, ValueError) as error:
        return fail(str(error), EXIT_USAGE)
    except KeyboardInterrupt:
        return fail("interrupted; run the same command again to resume", 130)


def fail(message: str, code: int) -> int:
    print(f"ocr-client: {message}", file=sys.stderr)
    return code


def run_submit(client: Client, args) -> int:
    formats = [fmt.strip() for fmt in args.format.split(",") if fmt.strip()]
    files = sources(args.paths, args.out)
    if not files:
        return fail("no files to submit", EXIT_USAGE)
    options = {"pipeline": args.pipeline, "lang": args.lang, "pages": args.pages, "text_layer": args.text_layer,
               "orientation": args.orientation, "webhook_url": args.webhook_url, "document_type": args.document_type}
    bulk = BulkSubmit(client, {k: v for k, v in options.items() if v is not None}, args.out, formats, args.wait,
                  concurrency=args.concurrency, timeout=args.timeout, progress=False if args.no_progress else None)
    outcomes = bulk.run(files)
    bad = [o for o in outcomes if o.status in ("refused", "failed", "canceled")]
    print(f"{len(outcomes) - len(bad)} of {len(outcomes)} files done"
          + (f"; {len(bad)} not: " + ", ".join(f"{o.source.path} ({o.status})" for o in bad) if bad else ""))
    return EXIT_FAILED if bad else 0


def run_status(client: Client, args) -> int:
    job = client.job(args.job)
    if args.wait:
        job.wait()
    if args.json:
        print(json.dumps(job.data, indent=1))
    else:
        progress, error = job.progress, job.error
        print(f"{job.id} {job.status} {progress.get('pages_done', 0)}/{progress.get('pages_total', 0)} pages "
              f"{job.document.get('name', '')}" + (f" {error['code']}: {error['detail']}" if error else ""))
    return EXIT_FAILED if job.status in ("failed", "canceled") else 0


def run_result(client: Client, args) -> int:
    result = client.job(args.job).result()
    print(json.dumps(result.raw, indent=1, ensure_ascii=False) if args.json else result.text)
    return 0


def run_export(client: Client, args) -> int:
    name, params, _ = EXPORT_ALIASES.get(args.format, (args.format, {}, ""))
    job = client.job(args.job)
    if args.format == FIELDS_FORMAT:
        written = write_fields(job, args.out, FIELDS_WAIT)
        if args.out:
            print(written)
        else:
            sys.stdout.buffer.write(written)
        return 0
    if args.out:
        print(job.export(name, args.out, **params))
    else:
        sys.stdout.buffer.write(job.export(name, **params))
    return 0


def run_cancel(client: Client, args) -> int:
    job = client.job(args.job).cancel()
    print(f"{job.id} {job.status}")
    return 0


def run_search(client: Client, args) -> int:
    hits = client.search(args.query, job=args.job, page=args.page, limit=args.limit)
    for hit in hits:
        print(json.dumps(hit.__dict__, ensure_ascii=False) if args.json
              else f"{hit.job} p{hit.page} {hit.line_id}: {hit.text}  {hit.links.get('review', '')}")
    return 0 if hits else EXIT_FAILED


def run_mcp(client: Client, args) -> int:
    try:  # the mcp extra is optional
        from ocr_client.mcp_server import serve
    except ImportError:
        return fail("the MCP server needs its extra: pip install 'ocr-client[mcp]'", EXIT_USAGE)
    # Nothing goes to standard output before this in stdio mode: it is the MCP channel.
    serve(base_url=client.base_url, token=None if args.http else client.token, http=args.http, host=args.host,
          port=args.port, allowed_hosts=args.allowed_hosts)
    return 0


COMMANDS = {"submit": run_submit, "status": run_status, "result": run_result, "export": run_export,
            "cancel": run_cancel, "search": run_search, "mcp": run_mcp}


if __name__ == "__main__":
    sys.exit(main())
