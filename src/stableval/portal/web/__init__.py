"""The web server: the app factory (:mod:`~stableval.portal.web.app`), what the routes share
(:mod:`~stableval.portal.web.common`) and the routes: rater pages (:mod:`~stableval.portal.web.rater_routes`), the
step pages of every task type (:mod:`~stableval.portal.web.step_routes`) and the admin pages
(:mod:`~stableval.portal.web.admin_routes`). Route handlers hold no SQL."""
