"""The raters' work: who gets which question (:mod:`~stableval.portal.work.assignment`,
:mod:`~stableval.portal.work.scope`, :mod:`~stableval.portal.work.adaptive`), drafts and the atomic submit
(:mod:`~stableval.portal.work.flow`), quality control (:mod:`~stableval.portal.work.quality`), proposed
questions (:mod:`~stableval.portal.work.question_queue`) and the per-request session check
(:mod:`~stableval.portal.work.access`)."""
