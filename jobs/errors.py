"""Platform errors, in the engine's typed-error family so one handler maps them all."""

from ocr_engine.errors import InputError, OcrError


class JobStateError(OcrError):
    """The job is not in a state that allows this action (e.g. cancel a finished job)."""

    code = "invalid_state"


class UrlNotAllowed(InputError):
    """file_url / webhook_url is not http(s) or points at a private address."""

    code = "url_not_allowed"


class UrlFetchFailed(InputError):
    """The server could not download file_url (network error, HTTP error, time-out)."""

    code = "url_fetch_failed"


class LineNotFound(InputError):
    """A line correction names a line id that is not on the page."""

    code = "line_not_found"
