"""Names for the few statements written as fixed SQL: the hottest ones, whose ORM form cost more
CPU to build on every call than to run; and inserts made ready before the transaction that runs them."""

from __future__ import annotations

import functools
from types import SimpleNamespace

from django.db import connection, connections


def quoted_table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def quoted_columns(model) -> SimpleNamespace:
    """Each concrete field's column, quoted, by field name: ``quoted_columns(Job).owner`` is ``"owner_id"``."""
    quote = connection.ops.quote_name  # the same function for every connection of a vendor
    return SimpleNamespace(**{field.name: quote(field.column) for field in model._meta.concrete_fields})


def placeholders(count: int) -> str:
    """``%s, %s, …``: ``count`` parameters, for a fixed statement's ``IN (…)``."""
    return ", ".join(["%s"] * count)


def thread_read(sql: str, params: list) -> list[tuple]:
    """The rows of a read made by a long-lived thread of the process (not a request's).

    Its connection goes back to the process's pool (ocrsite/db_sqlite3), which closes it
    before a fork: kept by the thread, a forked child would close it and could take the WAL
    file with it.
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    finally:
        connection.close()


class PreparedInsert:
    """``obj.save(force_insert=True)`` in two halves: the statement and its values are made now, and
    ``execute`` runs them, in a write transaction that then holds the database's write lock only
    for the statement itself.

    The ORM builds the statement on every save, and a submission saved its document and job
    inside the write transaction, whose lock every writer of the site waits for: 0.72 ms of
    CPU there, against 0.27 ms for ``execute`` (0.40 ms before it, in the request's own time).
    For a model without parents and with nothing listening to its save signals. Fields
    named in ``late`` are read from ``obj`` again at ``execute``: a key known only then, or a
    time (``auto_now_add``) that must be the insert's own.
    """

    def __init__(self, obj, *, late: tuple[str, ...] = (), using: str = "default"):
        meta = obj._meta
        if meta.parents:
            raise TypeError(f"{type(obj).__name__} inherits a table; save it with the ORM")
        self.obj, self.using = obj, using
        self.returning = meta.pk if obj.pk is None and meta.pk in meta.db_returning_fields else None
        self.fields, self.sql = _insert_statement(type(obj), self.returning is not None, using)
        self.late = [index for index, field in enumerate(self.fields) if {field.name, field.attname} & set(late)]
        # The connection once: each ``connections[...]`` is a lookup in a context-local store.
        connection = connections[using]
        self.params = [self._value(field, connection) for field in self.fields]

    def execute(self):
        """Insert the row (the caller holds the transaction); ``obj`` is then saved, its key set."""
        connection = connections[self.using]
        params = list(self.params)
        for index in self.late:
            params[index] = self._value(self.fields[index], connection)
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            if self.returning is not None:
                if connection.features.can_return_columns_from_insert:
                    key = cursor.fetchone()[0]
                else:
                    key = connection.ops.last_insert_id(cursor, self.obj._meta.db_table, self.returning.column)
                setattr(self.obj, self.returning.attname, key)
        self.obj._state.adding, self.obj._state.db = False, self.using
        return self.obj

    def _value(self, field, connection):
        # What the ORM's insert compiler sends for a plain value.
        value = field.pre_save(self.obj, add=True)
        if hasattr(value, "resolve_expression"):
            raise TypeError(f"{field.name}: an expression; save it with the ORM")
        return field.get_db_prep_save(value, connection=connection)


@functools.cache
def _insert_statement(model, returning_key: bool, using: str) -> tuple[list, str]:
    """The fields an insert of ``model`` writes (the ORM's: all but a key the database makes) and its SQL."""
    meta, connection = model._meta, connections[using]
    quote = connection.ops.quote_name
    fields = [field for field in meta.local_concrete_fields
              if not (returning_key and field is meta.pk) and not field.generated]
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    if returning_key and connection.features.can_return_columns_from_insert:
        sql += " " + connection.ops.return_insert_columns([meta.pk])[0]
    return fields, sql
