"""The store's SQL written once, for every SQL backend (SQLite, PostgreSQL).

The backends hold the same tables and answer the same :class:`~memrecall.store.backend.Store`
methods with the same statements; what differs (connections and locking, the schema's
types, how times are stored, upserts, the change cursor, forget's scrub) stays in the
backend's own package, behind the small interface of
:class:`~memrecall.store.sqlcommon.base.SQLBase`.

* ``base``: that interface, and the statements every part shares (current record,
  memory_revision, governance events, the audit row);
* ``rows``: column lists and row conversions;
* ``memories`` / ``reads``: memory writes and reads;
* ``candidates``, ``governance``, ``contract``: candidates, settings/events/projection, the
  memory tools' side rows.

A backend's store is these mixins over its base class
(:class:`~memrecall.store.sqlite.SQLiteStore`, ``PostgresStore``).
"""
