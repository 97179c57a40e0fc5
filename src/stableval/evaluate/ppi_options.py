"""The settings of prediction-powered scores that users choose, declared once (flags, help and docs derive from
them); a light module, so the command line reads it without loading the statistics.

>>> INTERVAL.default, INTERVAL.choices
('bootstrap-t', ('bootstrap-t', 't', 'clt'))
>>> INTERVAL.check("t")
't'
"""

from __future__ import annotations

from stableval._options import Option

__all__ = ["INTERVAL", "INTERVAL_WORDS"]

#: how the people-only, judge-only and PPI++ score intervals (and the PPI++ differences') are computed
INTERVAL = Option(
    "interval", str,
    "How the intervals of the people-only, judge-only and PPI++ scores and of the PPI++ differences are computed: "
    "bootstrap-t (studentised bootstrap, λ re-tuned on every replicate; Student t when the bootstrap is off), t "
    "(Student t with n − 1 degrees of freedom, n the responses people rated) or clt (normal quantile: exactly "
    "ppi_py's intervals, short on a few dozen people-rated responses).",
    default="bootstrap-t", choices=("bootstrap-t", "t", "clt"))

#: each choice of :data:`INTERVAL` in words, for footnotes and reports
INTERVAL_WORDS: dict[str, str] = {
    "bootstrap-t": "bootstrap-t intervals (studentised bootstrap, λ re-tuned on every replicate)",
    "t": "Student-t intervals (n − 1 degrees of freedom, n the responses people rated)",
    "clt": "CLT (normal) intervals",
}
