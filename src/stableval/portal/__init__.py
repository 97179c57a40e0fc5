"""The evaluation portal (``stableval serve``): experts rate models' answers in tracks of one task type each.

FastAPI + Jinja2 server-rendered pages (no JavaScript needed), SQLAlchemy 2 with Alembic migrations, SQLite by
default (WAL, busy timeout) or PostgreSQL. Five sub-packages, each importing only those before it:

* :mod:`~stableval.portal.store`: tables, database and migrations, tokens, a track's confirmed answers;
* :mod:`~stableval.portal.tasks`: the task types behind one protocol (``TASKS``: pairwise, single, mcq, ddx,
  rank-documents), each one module with its form, checks, stored answer, gold answers, export and results;
* :mod:`~stableval.portal.work`: who rates what (routing, k, leases, adaptive assignment), drafts and the submit,
  quality control, proposed questions;
* :mod:`~stableval.portal.admin`: tracks, imports, invites, exports, the counts and live rater tables of the admin
  pages;
* :mod:`~stableval.portal.web`: the app factory and the routes (no SQL in a handler).

Needs the ``portal`` extra: ``pip install 'stableval[portal]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.portal.admin.export import export as export
    from stableval.portal.admin.manage import (
        create_invites as create_invites,
        create_track as create_track,
        import_questions as import_questions,
    )
    from stableval.portal.store.db import Database as Database
    from stableval.portal.tasks.base import TaskType as TaskType
    from stableval.portal.tasks.registry import TASKS as TASKS
    from stableval.portal.web.app import create_app as create_app

__getattr__, __dir__, __all__ = lazy_package(globals())
