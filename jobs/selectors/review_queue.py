"""The review queue: pages still to check across the user's jobs."""

from __future__ import annotations

from jobs import selectors

QUEUE_SIZE = 50


def review_queue(user, *, order: str = "confidence") -> list[dict]:
    """Pages of ``user``'s unreviewed jobs with their open lines (under ``PageResult.LOW_CONFIDENCE``,
    not yet corrected)."""
    pages = selectors.pages_worst_first(user).filter(job__reviewed_at__isnull=True).prefetch_related(
        "corrections", "edits")
    rows = []
    for page in pages[: QUEUE_SIZE * 4 if order == "open" else QUEUE_SIZE]:
        touched = {c.line_id for c in page.corrections.all()} | {
            e.payload.get("line_id") for e in page.edits.all() if e.undone_at is None}
        open_lines = len(set(page.low_confidence_lines) - touched)
        rows.append({"job": str(page.job_id), "document": page.job.document.original_name,
                     "page_number": page.page_number, "mean_confidence": page.mean_confidence,
                     "open_lines": open_lines, "url": f"/jobs/{page.job_id}/?page={page.page_number}"})
    if order == "open":
        rows.sort(key=lambda row: (-row["open_lines"], row["mean_confidence"]))
    return rows[:QUEUE_SIZE]
