"""The audit log: who or what deleted, canceled, retried, corrected, reviewed or exported which job.

The services that do these things call ``audit_record`` in their own transaction, so an entry exists
exactly when the change does. Entries are only ever added (``AuditEntry``).
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.models import AuditEntry, Job


@dataclass(frozen=True)
class Actor:
    """Who acts: ``name`` as the log shows it, ``address`` the client's (None: not from a request)."""

    name: str
    address: str | None = None

    @classmethod
    def of_request(cls, request, *, admin: bool = False) -> Actor:
        """The request's user, as ``user:<username>`` (``admin:<username>`` from the admin site)."""
        return cls.of_user(request.user, client_address(request), admin=admin)

    @classmethod
    def of_user(cls, user, address: str | None = None, *, admin: bool = False) -> Actor:
        return cls(f"{'admin' if admin else 'user'}:{user.get_username()}", address)


def client_address(request) -> str | None:
    # REMOTE_ADDR: the web server has already put a trusted proxy's client address there.
    return request.META.get("REMOTE_ADDR") or None


RETENTION = Actor("retention")  # the retention schedule and ``manage.py ocr_purge``


def audit_record(*, action: str, job: Job, by: Actor, detail: str = "") -> AuditEntry:
    return AuditEntry.objects.create(action=action, job=job.pk, owner=job.owner_id, actor=by.name,
                                     address=by.address, detail=detail)
