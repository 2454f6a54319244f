"""The array boundary of the estimator core: numpy or torch in, torch inside, the caller's out.

The estimators (:mod:`empathos.rl.advantages`), returns, rewards, the token broadcast and the
KL helpers are written once, on torch tensors. Their public functions accept numpy arrays or
torch tensors; numpy input is viewed as CPU tensors (no copy when it is contiguous and
writable) and the results are handed back as numpy arrays, torch input stays on its device and
the results are tensors there. So numpy in gives numpy out and torch in gives torch out, with
the same numbers. Pure: no I/O, no clocks.
"""

from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np
import torch
from numpy.typing import NDArray

__all__ = [
    "Array",
    "ArrayT",
    "as_bool",
    "as_float",
    "as_long",
    "device_of",
    "restore",
    "segment_max",
    "segment_min",
    "segment_sum",
]

Array: TypeAlias = NDArray[np.generic] | torch.Tensor
"""What the public functions of the core accept: a numpy array or a torch tensor."""

ArrayT = TypeVar("ArrayT", NDArray[np.generic], torch.Tensor)
"""The caller's array library: a function typed ``(x: ArrayT) -> ArrayT`` returns numpy for
numpy and torch for torch."""


def device_of(x: Array) -> torch.device:
    """Where the computation for ``x`` runs: the tensor's device, or the CPU for numpy."""
    return x.device if isinstance(x, torch.Tensor) else torch.device("cpu")


def _tensor(x: Array, dtype: torch.dtype, device: torch.device | None) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.to(device=x.device if device is None else device, dtype=dtype)
    arr = np.asarray(x)
    if not (arr.flags.writeable and arr.flags.c_contiguous):
        arr = np.array(arr, order="C", copy=True)  # torch.from_numpy wants writable, no < 0 strides
    return torch.from_numpy(arr).to(device=device or torch.device("cpu"), dtype=dtype)


def as_float(x: Array, device: torch.device | None = None) -> torch.Tensor:
    """``x`` as a float64 tensor (on ``device``, else where it is)."""
    return _tensor(x, torch.float64, device)


def as_long(x: Array, device: torch.device | None = None) -> torch.Tensor:
    """``x`` as an int64 tensor (on ``device``, else where it is)."""
    return _tensor(x, torch.int64, device)


def as_bool(x: Array, device: torch.device | None = None) -> torch.Tensor:
    """``x`` as a bool tensor (on ``device``, else where it is)."""
    return _tensor(x, torch.bool, device)


def restore(t: torch.Tensor, like: ArrayT) -> ArrayT:
    """``t`` in the library of ``like``: the tensor itself for torch, a numpy array for numpy."""
    if isinstance(like, torch.Tensor):
        return t
    out: NDArray[np.generic] = t.detach().cpu().numpy()
    return out


def segment_sum(values: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """(n,) float64 sums of ``values`` (N,) per segment id ``ids`` (N,) in 0..n-1."""
    out = torch.zeros(n, dtype=torch.float64, device=values.device)
    return out.index_add_(0, ids, values.to(torch.float64))


def _segment_reduce(
    values: torch.Tensor, ids: torch.Tensor, n: int, how: str, fill: float
) -> torch.Tensor:
    out = torch.full((n,), fill, dtype=torch.float64, device=values.device)
    return out.scatter_reduce(0, ids, values.to(torch.float64), how, include_self=True)


def segment_max(values: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """(n,) float64 maxima of ``values`` per segment (-inf for an empty segment)."""
    return _segment_reduce(values, ids, n, "amax", -float("inf"))


def segment_min(values: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """(n,) float64 minima of ``values`` per segment (+inf for an empty segment)."""
    return _segment_reduce(values, ids, n, "amin", float("inf"))
