"""The study team's side: tracks, imports, invites and raters (:mod:`~stableval.portal.admin.manage`,
:mod:`~stableval.portal.admin.track_form`), the counts the pages show (:mod:`~stableval.portal.admin.progress`,
:mod:`~stableval.portal.admin.track_raters`), exports (:mod:`~stableval.portal.admin.export`) and the live rater
tables (:mod:`~stableval.portal.admin.live_diagnostics`, :mod:`~stableval.portal.admin.order_agreement`)."""
