"""The portal's storage: tables (:mod:`~stableval.portal.store.models`), the database and its migrations
(:mod:`~stableval.portal.store.db`, :mod:`~stableval.portal.store.write_lock`), secrets and tokens
(:mod:`~stableval.portal.store.security`), a track's confirmed answers (:mod:`~stableval.portal.store.answers`)
and the per-track result cache (:mod:`~stableval.portal.store.result_cache`)."""
