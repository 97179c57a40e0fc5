"""Task types: what raters do in a track, one module per type behind one protocol.

:mod:`~stableval.portal.tasks.base` (the :class:`~stableval.portal.tasks.base.TaskType` protocol: capabilities as
fields, behaviour as methods), :mod:`~stableval.portal.tasks.registry` (``TASKS``, built from the type modules),
the types :mod:`~stableval.portal.tasks.pairwise`, :mod:`~stableval.portal.tasks.single`,
:mod:`~stableval.portal.tasks.mcq`, :mod:`~stableval.portal.tasks.ddx` and
:mod:`~stableval.portal.tasks.rank_documents`, and what they share: question-file reading
(:mod:`~stableval.portal.tasks.records`), the pairwise consistency rules (:mod:`~stableval.portal.tasks.rules`),
safe Markdown and transcripts (:mod:`~stableval.portal.tasks.render`, :mod:`~stableval.portal.tasks.transcripts`),
the pairwise judgment tables and results (:mod:`~stableval.portal.tasks.judgments`,
:mod:`~stableval.portal.tasks.pairwise_results`), the results summaries (:mod:`~stableval.portal.tasks.summary`)
and the consensus-order measures of ranking types (:mod:`~stableval.portal.tasks.ordering`).
"""
