"""Files of a watched folder (``manage.py ocr_watch``): what became of each, kept where a killed watcher finds it."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from jobs.models.documents import Job


class WatchedFile(models.Model):
    """One file dropped into a watched folder, from the moment it stopped growing until it was moved away.

    State machine (changed only by ``jobs.services.watch``)::

        seen      --job created (same transaction)-->  submitted
        seen      --refused as an upload-->            failed   (moved to failed/, .error.txt beside it)
        submitted --job succeeded, exports written-->  exported
        submitted --job failed or canceled-->          failed   (moved to failed/, .error.txt beside it)
        exported  --original moved to done/-->         done

    Every step is written after the work it records, and each piece of work can be done again with the
    same outcome (exports are overwritten whole, a move whose source is gone is done): a watcher killed
    anywhere redoes at most the step it was in. One row per name of a folder is active (not done or
    failed) at a time; the same name dropped again later is a new row, and the same content a new job
    only once the dedup window (OCR_DEDUP_WINDOW_SECONDS) is over.
    """

    class State(models.TextChoices):
        SEEN = "seen", "Seen"
        SUBMITTED = "submitted", "Submitted"
        EXPORTED = "exported", "Exported"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    ACTIVE_STATES = (State.SEEN, State.SUBMITTED, State.EXPORTED)

    folder = models.CharField(max_length=1000)  # the watched folder's absolute path
    name = models.CharField(max_length=255)  # the file's name in it
    size_bytes = models.BigIntegerField()
    mtime_ns = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.SEEN)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="watched_files")
    error_code = models.CharField(max_length=64, blank=True)
    error_detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["folder", "name"], condition=Q(state__in=["seen", "submitted", "exported"]),
                                    name="watchedfile_one_active_per_name"),
        ]
        indexes = [models.Index(fields=["folder", "state"], name="watchedfile_folder_state")]

    def __str__(self) -> str:
        return f"{self.folder}/{self.name} ({self.state})"
