"""Style control's covariates: length and markdown of what the judge saw.

Pure. A dialogue's style is four counts over the replies as shown to the judge (truncated
as its prompt truncates them): characters, markdown headers, list items and bold spans.
A pair's covariates follow Arena-Hard's style control (``show_result.py``): the length as
the normalised difference ``(l_a - l_b) / (l_a + l_b)``; each markdown count as a density
per character, ``(d_a - d_b) / (d_a + d_b + 1)``; then every covariate scaled over the
outcomes of the fit to a root mean square of 1 (a covariate that is always 0 stays 0).
Arena-Hard also centres them; its pairs come in a random order, ours are ordered by name,
so centring would move part of a real difference between the models into the covariates:
a covariate of 0 means "the same style" here, and the strengths are the ratings at equal
style.
All four are fitted at once with the strengths (:func:`~empathos.pairwise.btfit.solve`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["STYLE", "StyleKey", "covariates", "style_of"]

F64 = npt.NDArray[np.float64]
#: The covariates, in order.
STYLE: tuple[str, ...] = ("length", "headers", "lists", "bold")
#: (scenario id, trial, model): the dialogue a style belongs to.
StyleKey = tuple[str, int, str]

_HEADER = re.compile(r"^ {0,3}#{1,6}\s+\S", re.M)
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S", re.M)
_BOLD = re.compile(r"\*\*(?=\S)[^*\n]+?\*\*|__(?=\S)[^_\n]+?__")


def style_of(text: str) -> tuple[float, float, float, float]:
    """(characters, headers, list items, bold spans) of ``text``."""
    return (
        float(len(text)),
        float(len(_HEADER.findall(text))),
        float(len(_LIST.findall(text))),
        float(len(_BOLD.findall(text))),
    )


def _pair(a: Sequence[float], b: Sequence[float]) -> list[float]:
    la, lb = max(a[0], 0.0), max(b[0], 0.0)
    row = [(la - lb) / (la + lb) if la + lb > 0 else 0.0]
    for ca, cb in zip(a[1:], b[1:], strict=True):
        da, db = ca / max(la, 1.0), cb / max(lb, 1.0)
        row.append((da - db) / (da + db + 1.0))
    return row


def covariates(
    keys: Sequence[tuple[StyleKey, StyleKey]], style: Mapping[StyleKey, Sequence[float]]
) -> F64:
    """(n, 4) scaled covariates of n pairs, each (key of a, key of b)."""
    x = np.array([_pair(style[a], style[b]) for a, b in keys], dtype=np.float64)
    if not len(x):
        return np.zeros((0, len(STYLE)))
    rms = np.sqrt(np.mean(x * x, axis=0))
    out: F64 = np.where(rms > 0, x / np.where(rms > 0, rms, 1.0), 0.0)
    return out
