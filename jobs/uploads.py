"""Upload handlers: every file is hashed while it streams in.

Django's two default handlers, each working out the file's SHA-256 chunk by chunk as the
request body is parsed (``UploadedFile.sha256``): the submission's dedup key needs it, and
hashing a 50 MB upload afterwards was another pass over the whole file. A file past
``FILE_UPLOAD_MAX_MEMORY_SIZE`` is spooled to ``FILE_UPLOAD_TEMP_DIR``, on the media volume
(settings), so that storing it is a rename, not a copy (``jobs.services.documents``).
"""

from __future__ import annotations

import hashlib

from django.core.files.uploadhandler import MemoryFileUploadHandler, TemporaryFileUploadHandler


class _Hashing:
    def new_file(self, *args, **kwargs):
        self.sha256 = hashlib.sha256()  # first: the handler that keeps the file ends new_file with StopFutureHandlers
        super().new_file(*args, **kwargs)

    def receive_data_chunk(self, raw_data, start):
        passed_on = super().receive_data_chunk(raw_data, start)
        if passed_on is None:  # kept by this handler; otherwise the next one keeps (and hashes) it
            self.sha256.update(raw_data)
        return passed_on

    def file_complete(self, file_size):
        file = super().file_complete(file_size)
        if file is not None:
            file.sha256 = self.sha256.hexdigest()
        return file


class HashingMemoryFileUploadHandler(_Hashing, MemoryFileUploadHandler):
    """Files up to FILE_UPLOAD_MAX_MEMORY_SIZE, kept in memory."""


class HashingTemporaryFileUploadHandler(_Hashing, TemporaryFileUploadHandler):
    """Larger files, spooled to FILE_UPLOAD_TEMP_DIR (the settings make the folder)."""
