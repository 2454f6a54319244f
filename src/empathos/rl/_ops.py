"""Array back-ends for the estimator core: the same maths on numpy arrays or torch tensors.

The estimators in :mod:`empathos.rl.advantages` and :mod:`empathos.rl.tokens` are written once
against the few primitives below (segment sums, segment extrema, gathers, scatters); the
back-end is chosen from the type of the input arrays, so numpy in gives numpy out and torch
in (any device) gives torch out. Pure: no I/O, no clocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Array", "NumpyOps", "Ops", "TorchOps", "ops_for"]

Array = Any
"""A numpy ``ndarray`` or a torch ``Tensor`` (the two are never mixed in one call)."""


class NumpyOps:
    """The primitives on numpy arrays (float64 for values, int64 for indices)."""

    name = "numpy"

    def __init__(self) -> None:
        self.inf = np.inf

    def float_(self, x: Array, like: Array | None = None) -> Array:
        return np.asarray(x, dtype=np.float64)

    def long(self, x: Array) -> Array:
        return np.asarray(x, dtype=np.int64)

    def bool_(self, x: Array) -> Array:
        return np.asarray(x, dtype=bool)

    def zeros(self, shape: tuple[int, ...], like: Array) -> Array:
        return np.zeros(shape, dtype=np.float64)

    def arange(self, n: int, like: Array) -> Array:
        return np.arange(n, dtype=np.int64)

    def where(self, cond: Array, a: Array, b: Array) -> Array:
        return np.where(cond, a, b)

    def copy(self, x: Array) -> Array:
        return np.array(x, copy=True)

    def sqrt(self, x: Array) -> Array:
        return np.sqrt(x)

    def isfinite(self, x: Array) -> Array:
        return np.isfinite(x)

    def cumsum(self, x: Array, axis: int) -> Array:
        return np.cumsum(x, axis=axis)

    def any_rows(self, x: Array) -> Array:
        return np.any(x, axis=1)

    def sum_rows(self, x: Array) -> Array:
        return np.sum(x, axis=1)

    def unique_inverse(self, keys: Array) -> tuple[Array, int]:
        uniq, inv = np.unique(keys, return_inverse=True)
        return inv.reshape(-1).astype(np.int64), len(uniq)

    def segment_sum(self, values: Array, ids: Array, n: int) -> Array:
        return np.bincount(ids, weights=values, minlength=n).astype(np.float64)

    def segment_max(self, values: Array, ids: Array, n: int) -> Array:
        out = np.full(n, -np.inf)
        np.maximum.at(out, ids, values)
        return out

    def segment_min(self, values: Array, ids: Array, n: int) -> Array:
        out = np.full(n, np.inf)
        np.minimum.at(out, ids, values)
        return out

    def gather_rows(self, x: Array, idx: Array) -> Array:
        return np.take_along_axis(x, idx, axis=1)

    def scatter_add_2d(self, shape: tuple[int, int], rows: Array, cols: Array, w: Array) -> Array:
        out = np.zeros(shape, dtype=np.float64)
        np.add.at(out, (rows, cols), w)
        return out

    def to_float(self, x: Array) -> float:
        return float(x)


class TorchOps:
    """The primitives on torch tensors (float64 for values, int64 for indices), any device."""

    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.inf = float("inf")

    def float_(self, x: Array, like: Array | None = None) -> Array:
        dev = like.device if like is not None else None
        return self.torch.as_tensor(x, dtype=self.torch.float64, device=dev)

    def long(self, x: Array) -> Array:
        return self.torch.as_tensor(x).to(self.torch.int64)

    def bool_(self, x: Array) -> Array:
        return self.torch.as_tensor(x).to(self.torch.bool)

    def zeros(self, shape: tuple[int, ...], like: Array) -> Array:
        return self.torch.zeros(shape, dtype=self.torch.float64, device=like.device)

    def arange(self, n: int, like: Array) -> Array:
        return self.torch.arange(n, dtype=self.torch.int64, device=like.device)

    def where(self, cond: Array, a: Array, b: Array) -> Array:
        t = self.torch
        dev = cond.device
        a_t = a if isinstance(a, t.Tensor) else t.tensor(a, dtype=t.float64, device=dev)
        b_t = b if isinstance(b, t.Tensor) else t.tensor(b, dtype=t.float64, device=dev)
        return t.where(cond, a_t, b_t)

    def copy(self, x: Array) -> Array:
        return x.clone()

    def sqrt(self, x: Array) -> Array:
        return self.torch.sqrt(x)

    def isfinite(self, x: Array) -> Array:
        return self.torch.isfinite(x)

    def cumsum(self, x: Array, axis: int) -> Array:
        return self.torch.cumsum(x, dim=axis)

    def any_rows(self, x: Array) -> Array:
        return self.torch.any(x, dim=1)

    def sum_rows(self, x: Array) -> Array:
        return self.torch.sum(x, dim=1)

    def unique_inverse(self, keys: Array) -> tuple[Array, int]:
        uniq, inv = self.torch.unique(keys, return_inverse=True)
        return inv.reshape(-1), int(uniq.numel())

    def segment_sum(self, values: Array, ids: Array, n: int) -> Array:
        out = self.torch.zeros(n, dtype=self.torch.float64, device=values.device)
        return out.index_add_(0, ids, values.to(self.torch.float64))

    def _segment_reduce(self, values: Array, ids: Array, n: int, how: str, fill: float) -> Array:
        out = self.torch.full((n,), fill, dtype=self.torch.float64, device=values.device)
        return out.scatter_reduce(0, ids, values.to(self.torch.float64), how, include_self=True)

    def segment_max(self, values: Array, ids: Array, n: int) -> Array:
        return self._segment_reduce(values, ids, n, "amax", -self.inf)

    def segment_min(self, values: Array, ids: Array, n: int) -> Array:
        return self._segment_reduce(values, ids, n, "amin", self.inf)

    def gather_rows(self, x: Array, idx: Array) -> Array:
        return self.torch.gather(x, 1, idx)

    def scatter_add_2d(self, shape: tuple[int, int], rows: Array, cols: Array, w: Array) -> Array:
        out = self.torch.zeros(shape, dtype=self.torch.float64, device=w.device)
        return out.index_put_((rows, cols), w.to(self.torch.float64), accumulate=True)

    def to_float(self, x: Array) -> float:
        return float(x.item()) if hasattr(x, "item") else float(x)


Ops = NumpyOps | TorchOps


def ops_for(x: Array) -> Ops:
    """The back-end for ``x``: :class:`TorchOps` for a torch tensor, else :class:`NumpyOps`."""
    if type(x).__module__.startswith("torch"):
        return TorchOps()
    return NumpyOps()
