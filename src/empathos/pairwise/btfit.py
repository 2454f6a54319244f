"""The one Bradley-Terry solver, and which strengths the data identify.

Pure. Every pairwise fit (plain, with style covariates, with a leaderboard's models held)
is :func:`solve`: maximum likelihood of ``sigmoid(s_a - s_b + beta . x)`` over outcomes with
a fractional score ``y`` in [0, 1] and a weight ``w`` each (``-sum w (y log p + (1 - y)
log(1 - p))``, Arena-Hard's loss), plus one ridge, :data:`ALPHA` ``x sum (s - c)^2``
(``c`` 0, or the median of the held strengths). The ridge only keeps a strength finite when
the data do not bound it; it moves identified strengths by far less than a rating point
(docs/pairwise.md gives the measurement). Strengths the data do not bound are found by
:func:`identification` and shown as "not identified", never as numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["ALPHA", "default_anchor", "identification", "solve"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
#: The ridge of every fit (per model, on the logit scale; see the module docstring).
ALPHA = 1e-6


def _collapse(ia: I64, ib: I64, y: F64, w: F64, m: int) -> tuple[I64, I64, F64, F64]:
    """Outcomes of the same ordered model pair merged (their weights summed, their scores
    weight-averaged): the same likelihood, fewer rows, when no covariate tells them apart."""
    key = ia * m + ib
    uniq, inv = np.unique(key, return_inverse=True)
    ws = np.bincount(inv, weights=w, minlength=len(uniq)).astype(np.float64)
    ys = np.bincount(inv, weights=w * y, minlength=len(uniq)) / np.where(ws > 0, ws, 1.0)
    return (uniq // m).astype(np.int64), (uniq % m).astype(np.int64), ys, ws


def _objective(d: F64, off: F64, y: F64, w: F64, theta: F64, prior: F64, alpha: F64) -> float:
    z = d @ theta + off
    nll = np.sum(w * (y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z)))
    return float(nll + np.sum(alpha * (theta - prior) ** 2))


def _newton(d: F64, off: F64, y: F64, w: F64, prior: F64, alpha: F64) -> F64:
    """The minimum of the convex objective (weighted logistic loss of ``d @ theta + off``
    plus ``alpha (theta - prior)^2``) by Newton's method with step halving."""
    theta = prior.copy()
    value = _objective(d, off, y, w, theta, prior, alpha)
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-(d @ theta + off)))
        grad = d.T @ (w * (p - y)) + 2.0 * alpha * (theta - prior)
        if np.max(np.abs(grad), initial=0.0) < 1e-10:
            break
        hess = (d * (w * p * (1.0 - p))[:, None]).T @ d + np.diag(2.0 * alpha)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:  # a covariate that is always 0: no curvature
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        if float(grad @ step) < 1e-14:  # the Newton decrement: nothing left to gain
            break
        t = 1.0
        while t > 1e-12:
            new = _objective(d, off, y, w, theta - t * step, prior, alpha)
            if new <= value:
                break
            t /= 2.0
        if t <= 1e-12:
            break
        theta, value = theta - t * step, new
    return theta


def solve(
    ia: I64,
    ib: I64,
    y: F64,
    w: F64,
    m: int,
    x: F64 | None = None,
    fixed: Mapping[int, float] | None = None,
    alpha: float = ALPHA,
) -> tuple[F64, F64]:
    """Strengths (m,) and covariate coefficients (k,) of the module docstring's fit;
    ``x`` (n, k) the covariates per outcome (None: none); ``fixed`` index -> strength held.
    Without ``fixed`` the strengths are centred (mean 0)."""
    held = dict(fixed or {})
    if x is None:
        ia, ib, y, w = _collapse(ia, ib, y, w, m)
    k = 0 if x is None else x.shape[1]
    free = [i for i in range(m) if i not in held]
    col = {i: n for n, i in enumerate(free)}
    base = np.zeros(m)
    for i, v in held.items():
        base[i] = v
    center = float(np.median(list(held.values()))) if held else 0.0
    # the design: z = d @ theta + offset, theta = (free strengths, coefficients)
    d = np.zeros((len(ia), len(free) + k))
    rows = np.arange(len(ia))
    for idx, sign in ((ia, 1.0), (ib, -1.0)):
        mask = np.array([i in col for i in idx], dtype=bool)
        d[rows[mask], [col[int(i)] for i in idx[mask]]] += sign
    if x is not None:
        d[:, len(free) :] = x
    prior = np.concatenate([np.full(len(free), center), np.zeros(k)])
    alpha_v = np.concatenate([np.full(len(free), alpha), np.zeros(k)])
    theta = _newton(d, base[ia] - base[ib], y, w, prior, alpha_v)
    s = base.copy()
    s[free] = theta[: len(free)]
    if not held:
        s = s - s.mean()
    return s, np.asarray(theta[len(free) :], dtype=np.float64)


def _closure(edges: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Reachability: ``out[i, j]`` when a path of edges leads from i to j (or i == j)."""
    reach = edges | np.eye(len(edges), dtype=bool)
    while True:
        nxt = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if np.array_equal(nxt, reach):
            return reach
        reach = nxt


def identification(wins: F64, anchor: int, tied: Sequence[int] = ()) -> F64:
    """Per model, whether the data bound its strength relative to model ``anchor``: 0 yes
    (a chain of wins leads from it to the anchor and another back), +1 no, it is above
    (chains lead only down to the anchor: it won every comparison that links them), -1 no,
    it is below, NaN no, nothing links them. ``wins[i, j]``: what i scored against j;
    ``tied``: models held relative to each other (a leaderboard's), linked both ways."""
    edges = wins > 0
    for i in tied:
        for j in tied:
            edges[i, j] = True
    reach = _closure(edges)
    up, down = reach[:, anchor], reach[anchor, :]
    out = np.full(len(wins), np.nan)
    out[up & down] = 0.0
    out[up & ~down] = 1.0
    out[~up & down] = -1.0
    return out


def default_anchor(wins: F64, models: Sequence[str]) -> int:
    """The first model by name among those whose group (strongly linked by wins both ways)
    is the largest: the anchor that leaves the most models identified."""
    reach = _closure(wins > 0)
    size = (reach & reach.T).sum(axis=1)
    best = int(size.max())
    return min((i for i in range(len(models)) if size[i] == best), key=lambda i: models[i])
