"""Names for the few statements written as fixed SQL: the hottest ones, whose ORM form cost more
CPU to build on every call than to run."""

from __future__ import annotations

from types import SimpleNamespace

from django.db import connection


def quoted_table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def quoted_columns(model) -> SimpleNamespace:
    """Each concrete field's column, quoted, by field name: ``quoted_columns(Job).owner`` is ``"owner_id"``."""
    quote = connection.ops.quote_name  # the same function for every connection of a vendor
    return SimpleNamespace(**{field.name: quote(field.column) for field in model._meta.concrete_fields})
