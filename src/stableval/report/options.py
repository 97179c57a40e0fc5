"""What a report adds beyond its analyses: :class:`ReportOptions` (worker processes, quality control, rater kinds,
answer lengths) and :class:`QualityControl`, where the reference of reliability against QC comes from.

Both are plain records (no heavy imports), so the command line builds them from its flags cheaply.

>>> ReportOptions.of({"jobs": 2, "qc": {"consensus": True}})
ReportOptions(jobs=2, qc=QualityControl(raters=None, file=None, consensus=True), rater_info=None, lengths=None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from stableval.data.raters import RaterInfo

__all__ = ["QualityControl", "ReportOptions"]


@dataclass(frozen=True)
class QualityControl:
    """The quality-control (QC) reference of reliability against QC: one of the QC raters' ids, a QC (gold) file,
    or the consensus of the other raters of each item.

    >>> QualityControl.of(rater="qc1, qc2").raters, QualityControl.of()
    (('qc1', 'qc2'), None)
    """

    raters: tuple[str, ...] | None = None
    file: Path | None = None
    consensus: bool = False

    @classmethod
    def of(cls, rater: str | Sequence[str] | None = None, file: str | Path | None = None,
           consensus: bool = False) -> QualityControl | None:
        """The record from QC rater ids (a sequence or ``"id1,id2"``), a QC file, or ``consensus``; ``None`` when
        none of them is given."""
        names = [part.strip() for part in rater.split(",")] if isinstance(rater, str) else list(rater or ())
        raters = tuple(name for name in names if name) or None
        if raters is None and file is None and not consensus:
            return None
        return cls(raters, Path(file) if file is not None else None, bool(consensus))


@dataclass(frozen=True, eq=False)
class ReportOptions:
    """What a report adds beyond its analyses.

    Attributes:
        jobs: worker processes for the stability analysis.
        qc: adds the reliability-against-QC section, with this QC.
        rater_info: the raters' kinds and families: adds the people-vs-LLM-judges section.
        lengths: the answer length per response, for the LLM judges' length bias.
    """

    jobs: int = 1
    qc: QualityControl | None = None
    rater_info: RaterInfo | None = None
    lengths: np.ndarray | None = None

    @classmethod
    def of(cls, options: ReportOptions | Mapping[str, Any] | None) -> ReportOptions:
        """The record itself, the defaults for ``None``, or the record of a mapping with the same keys (``qc`` a
        :class:`QualityControl` or a mapping with ``rater``, ``file`` or ``consensus``)."""
        if isinstance(options, ReportOptions):
            return options
        values = dict(options or {})
        qc = values.get("qc")
        if isinstance(qc, Mapping):
            values["qc"] = QualityControl.of(qc.get("rater"), qc.get("file"), bool(qc.get("consensus")))
        unknown = sorted(set(values) - {"jobs", "qc", "rater_info", "lengths"})
        if unknown:
            raise TypeError(f"unknown report option(s) {', '.join(unknown)}; allowed: jobs, qc, rater_info, lengths")
        return cls(**values)
