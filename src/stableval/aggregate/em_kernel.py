"""The fused E-step of one row block, compiled with numba when it is installed (``pip install 'stableval[fast]'``).

One pass over a block of the response matrix (responses × rater·K + label, CSR) does what the numpy E-step of
:class:`~stableval.aggregate.em.ResponseBlocks` does in about ten: the log joint ``log mu_c + sum_j x_ij log
pi[col_j, c]`` of each response (Dawid & Skene 1979, JRSS C 28(1)), its softmax (the posterior), the marginal
log-likelihood (the sum of the log normalisers) and the M-step's expected counts ``sum_i gamma_ic x_ij`` — each
response's judgments are read once and its posterior is scattered into the counts while both are in registers.
Rows are taken in chunks; the exponentials of a chunk run in one loop that the compiler vectorises (a
Cody–Waite range reduction and a degree-11 Taylor polynomial, relative error below 1e-14; Cody & Waite 1980,
"Software Manual for the Elementary Functions"), since a scalar ``exp`` per value would cost more than the rest.
Everything is double precision.

The numpy path stays the reference: the tests compare both. By default (``STABLEVAL_EM_KERNEL=auto``) the compiled
kernel runs when numba is installed and the matrix holds at least :data:`COMPILED_FROM` stored judgments — below
that an E-step costs milliseconds either way, and numba (imported only then) would add its import and, on first use,
its compilation; ``STABLEVAL_EM_KERNEL=numpy`` always takes the numpy path, ``STABLEVAL_EM_KERNEL=numba`` always the
compiled kernel (an error without numba).

>>> import numpy as np
>>> table = np.log(np.array([[0.9, 0.2], [0.1, 0.8]]))   # 1 rater, K = 2: row o holds log pi[c, o] for c = 0, 1
>>> out, counts = np.empty((2, 1)), np.zeros((2, 2))
>>> if NUMBA:  # one response, one judgment of level 0, flat class priors
...     ll = fused_e_step(np.array([0, 1]), np.array([0]), np.array([1.0]), table, np.log([0.5, 0.5]),
...                       np.empty(0, np.int64), out, counts, np.zeros(2))
... else:
...     out[:, 0], ll = [0.9 / 1.1, 0.2 / 1.1], float(np.log(0.55))
>>> out.ravel().round(4).tolist(), round(ll, 6) == round(float(np.log(0.55)), 6)
([0.8182, 0.1818], True)
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from typing import Any

import numpy as np

#: ``STABLEVAL_EM_KERNEL``: ``auto`` (numba for large matrices when installed), ``numpy`` or ``numba``
KERNEL_CHOICES = ("auto", "numpy", "numba")
#: with ``auto``, the compiled kernel runs from this many stored judgments (nonzeros of the response matrix) on:
#: below it the E-steps it saves in a fit cost less than loading numba and the compiled kernel (~1 s per process)
COMPILED_FROM = 2_000_000
#: rows per chunk: a chunk's logits (K × CHUNK doubles) stay in the first-level cache between the passes
CHUNK = 256

#: whether numba can be imported (found, not imported: importing it takes a few tenths of a second)
NUMBA = importlib.util.find_spec("numba") is not None
_numba: Any = None


def kernel_choice(stored: int = COMPILED_FROM) -> str:
    """The E-step kernel for a matrix of ``stored`` judgments: ``"numba"`` or ``"numpy"``, from
    ``STABLEVAL_EM_KERNEL`` and what is installed.

    >>> kernel_choice(10) == "numpy" or os.environ.get("STABLEVAL_EM_KERNEL") == "numba"
    True
    """
    wanted = os.environ.get("STABLEVAL_EM_KERNEL", "auto").strip().lower() or "auto"
    if wanted not in KERNEL_CHOICES:
        raise ValueError(f"STABLEVAL_EM_KERNEL={wanted!r}; allowed: {', '.join(KERNEL_CHOICES)}")
    if wanted == "numba" and not NUMBA:
        raise ValueError("STABLEVAL_EM_KERNEL=numba but numba is not installed: pip install 'stableval[fast]'")
    if wanted == "numba" or (wanted == "auto" and NUMBA and stored >= COMPILED_FROM):
        return "numba"
    return "numpy"


LOG2E = 1.4426950408889634
LN2_HI = 0.6931471803691238  # ln 2 split in two (fdlibm's constants): n·LN2_HI is exact for |n| < 2^20
LN2_LO = 1.9082149292705877e-10
SHIFT = 6755399441055744.0  # 1.5 · 2^52: adding it rounds to an integer held in the low mantissa bits
EXP_FLOOR = -708.0  # exp(-708) ≈ 3e-308, the smallest power kept normal: below it, weights are ~0 anyway
EXPONENT_ONE = np.int64(1023) << np.int64(52)


def _fused_e_step(indptr: Any, indices: Any, data: Any, table: Any, log_priors: Any, gold: Any, out: Any,
                  counts: Any, mass: Any, k: Any) -> float:  # pragma: no cover - compiled by numba
    """Posteriors into ``out`` (K, Nb), expected counts added into ``counts`` (R·K, K) [col, true level] and
    posterior mass into ``mass`` (K,); returns the block's log-likelihood. ``gold`` (Nb,) or empty."""
    k = _numba.literally(k)
    n_rows = indptr.size - 1
    logits = np.empty(k * CHUNK)
    weights = np.empty(k * CHUNK)
    shifted = np.empty(k * CHUNK)
    shifted_bits = shifted.view(np.int64)
    scale_bits = np.empty(k * CHUNK, np.int64)
    scale = scale_bits.view(np.float64)
    tops = np.empty(CHUNK)
    log_likelihood = 0.0
    product = 1.0
    has_gold = gold.size > 0
    m0 = m1 = m2 = 0.0  # K = 3: the posterior mass in registers
    for first in range(0, n_rows, CHUNK):
        size = min(CHUNK, n_rows - first)
        # 1. log joint per (response, class), minus the response's largest (K = 3, the common case, in scalars
        # the compiler keeps in registers)
        for r in range(size):
            i = first + r
            base = r * k
            if k == 3:
                a0, a1, a2 = log_priors[0], log_priors[1], log_priors[2]
                for j in range(indptr[i], indptr[i + 1]):
                    col = indices[j]
                    w = data[j]
                    a0 += w * table[col, 0]
                    a1 += w * table[col, 1]
                    a2 += w * table[col, 2]
                logits[base] = a0
                logits[base + 1] = a1
                logits[base + 2] = a2
            else:
                for c in range(k):
                    logits[base + c] = log_priors[c]
                for j in range(indptr[i], indptr[i + 1]):
                    col = indices[j]
                    w = data[j]
                    for c in range(k):
                        logits[base + c] += w * table[col, c]
            if has_gold and gold[i] >= 0:
                keep = logits[base + gold[i]]
                for c in range(k):
                    logits[base + c] = -np.inf
                logits[base + gold[i]] = keep
            top = logits[base]
            for c in range(1, k):
                top = max(top, logits[base + c])
            tops[r] = top
            for c in range(k):
                logits[base + c] -= top
        # 2. exp of the chunk (all values <= 0) in straight-line code the compiler vectorises
        m = size * k
        for q in range(m):
            x = max(logits[q], EXP_FLOOR)
            t = x * LOG2E + SHIFT
            n = t - SHIFT
            f = (x - n * LN2_HI) - n * LN2_LO
            shifted[q] = t
            weights[q] = 1.0 + f * (1.0 + f * (0.5 + f * (1.0 / 6.0 + f * (1.0 / 24.0 + f * (
                1.0 / 120.0 + f * (1.0 / 720.0 + f * (1.0 / 5040.0 + f * (1.0 / 40320.0 + f * (
                    1.0 / 362880.0 + f * (1.0 / 3628800.0 + f * (1.0 / 39916800.0)))))))))))
        for q in range(m):
            scale_bits[q] = (shifted_bits[q] << 52) + EXPONENT_ONE  # 2^n, n in [-1022, 0]
        for q in range(m):
            weights[q] = weights[q] * scale[q] if logits[q] > -np.inf else 0.0
        # 3. normalise, log-likelihood, posterior mass and the M-step's counts
        for r in range(size):
            i = first + r
            base = r * k
            if k == 3:
                w0, w1, w2 = weights[base], weights[base + 1], weights[base + 2]
                total = w0 + w1 + w2
            else:
                total = 0.0
                for c in range(k):
                    total += weights[base + c]
            log_likelihood += tops[r]
            product *= total  # total is in [1, K]: take the log of a running product, not of every total
            if product > 1e280:
                log_likelihood += np.log(product)
                product = 1.0
            inverse = 1.0 / total
            if k == 3:
                p0, p1, p2 = w0 * inverse, w1 * inverse, w2 * inverse
                out[0, i] = p0
                out[1, i] = p1
                out[2, i] = p2
                m0 += p0
                m1 += p1
                m2 += p2
                for j in range(indptr[i], indptr[i + 1]):
                    col = indices[j]
                    w = data[j]
                    counts[col, 0] += w * p0
                    counts[col, 1] += w * p1
                    counts[col, 2] += w * p2
            else:
                for c in range(k):
                    p = weights[base + c] * inverse
                    weights[base + c] = p
                    out[c, i] = p
                    mass[c] += p
                for j in range(indptr[i], indptr[i + 1]):
                    col = indices[j]
                    w = data[j]
                    for c in range(k):
                        counts[col, c] += w * weights[base + c]
    if k == 3:
        mass[0] += m0
        mass[1] += m1
        mass[2] += m2
    return float(log_likelihood + np.log(product))


#: the compiled kernel (made on first use) and its specialisation per argument types and K: dispatching on a
#: literal K through the dispatcher re-resolves the types on every call (~0.4 s), an entry point costs microseconds
#: (``compile`` returns it; the first time in a process it loads the on-disk cache)
_compiled: Any = None
_entries: dict[tuple[Any, ...], Any] = {}
#: one thread at a time imports numba and compiles or loads an entry; the others wait for it (:func:`preload`)
_loading = threading.Lock()


def _entry(args: tuple[Any, ...], k: int) -> Any:
    """The compiled entry point for these arguments and K, made (or loaded from numba's on-disk cache) once."""
    global _numba, _compiled
    if _numba is not None:  # the usual call: no lock
        entry = _entries.get((*(_numba.typeof(a) for a in args), _numba.types.literal(k)))
        if entry is not None:
            return entry
    with _loading:
        if _compiled is None:
            if not NUMBA:
                raise ValueError("the compiled E-step needs numba: pip install 'stableval[fast]'")
            _numba = importlib.import_module("numba")  # optional and untyped: the `fast` extra
            _compiled = _numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy",
                                    fastmath={"contract", "arcp"})(_fused_e_step)
        types = (*(_numba.typeof(a) for a in args), _numba.types.literal(k))
        entry = _entries.get(types)
        if entry is None:  # compile for these types, or load them from numba's on-disk cache, without dispatching
            entry = _entries[types] = _compiled.compile(types)
        return entry


def fused_e_step(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, table: np.ndarray,
                 log_priors: np.ndarray, gold: np.ndarray, out: np.ndarray, counts: np.ndarray,
                 mass: np.ndarray) -> float:
    """The compiled E-step of one CSR block (see the module docstring); releases the GIL. ``table`` (R·K, K) is
    :func:`~stableval.aggregate.em.log_confusion_table`, ``log_priors`` (K,), ``gold`` (Nb,) int64 or empty; writes
    ``out`` (K, Nb) and adds into ``counts`` (R·K, K) and ``mass`` (K,); returns the log-likelihood."""
    args = (indptr, indices, data, table, log_priors, gold, out, counts, mass)
    k = int(table.shape[1])
    return float(_entry(args, k)(*args, k))


def preload(k: int, index_dtype: Any = np.int32) -> threading.Thread | None:
    """Import numba and load the kernel for K = ``k`` in a background thread, for the arguments a matrix with
    ``index_dtype`` indices cut into several blocks passes (:class:`~stableval.aggregate.em.ResponseBlocks`), so
    that the ~0.4 s this takes once per process runs while the fit builds its starts; the first E-step waits for it
    if it has not finished. Returns the thread, or None when numba is not installed.

    >>> thread = preload(3)
    >>> thread is None or (thread.join() or True)
    True
    """
    if not NUMBA:
        return None
    sample = np.empty((k, 3))[:, 1:]  # a block's slice of the (K, N) posteriors: not contiguous
    args = (np.zeros(3, index_dtype), np.zeros(0, index_dtype), np.zeros(0), np.zeros((k, k)), np.zeros(k),
            np.empty(0, np.int64), sample, np.zeros((k, k)), np.zeros(k))
    thread = threading.Thread(target=_entry, args=(args, k), name="stableval-em-kernel-load", daemon=True)
    thread.start()
    return thread
