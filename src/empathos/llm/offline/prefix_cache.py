"""An exact prefix cache of key/value states, for the offline model and local policies.

A dialogue's roles send prompts that mostly extend their previous ones (the fixed order,
the history, then the turn's new part). :class:`PrefixCache` keeps the key/value states of
recent token sequences (prompt and reply), bounded in bytes, least recently used evicted, and
hands back the states of the longest prefix a new prompt shares with one of them, so only the
rest is computed. Exact: the kept states are what a forward pass over the same tokens at the
same positions computes; at least the prompt's last token is always computed (its logits start
the reply). A full-attention decoder (every layer a plain ``DynamicLayer``) only; anything else
(sliding windows, other caches) is computed in full.

:func:`batch_cache` and :func:`remember_batch` do the same for a left-padded batch, whose
rows' padding is masked out: each row's kept states are placed after its padding, and the
cache handed to ``generate`` covers the positions every row can take from it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from empathos.errors import ConfigError

if TYPE_CHECKING:
    import torch

    Layers = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values (1, heads, T, dim)

__all__ = [
    "DEFAULT_PREFIX_CACHE_MB",
    "PrefixCache",
    "batch_cache",
    "layers_of",
    "prefix_cache_bytes",
    "remember_batch",
]

DEFAULT_PREFIX_CACHE_MB = 512
_ENV = "EMPATHOS_PREFIX_CACHE_MB"


def prefix_cache_bytes() -> int:
    """The bound in bytes: ``$EMPATHOS_PREFIX_CACHE_MB`` MiB (default 512; 0 turns it off)."""
    value = os.environ.get(_ENV, str(DEFAULT_PREFIX_CACHE_MB))
    try:
        mib = float(value)
    except ValueError:
        raise ConfigError(f"not a number: {value!r}", field=_ENV) from None
    if not mib >= 0:
        raise ConfigError(f"must be 0 or more, not {value!r}", field=_ENV)
    return int(mib * 2**20)


@dataclass
class _Entry:
    tokens: torch.Tensor  # (T,) long
    layers: Layers
    nbytes: int


@dataclass
class PrefixCache:
    """Key/value states of recent token sequences, at most ``max_bytes`` in all (LRU)."""

    max_bytes: int = field(default_factory=prefix_cache_bytes)
    entries: OrderedDict[int, _Entry] = field(default_factory=OrderedDict)
    nbytes: int = 0
    lookups: int = 0
    hits: int = 0
    saved_tokens: int = 0  # prompt tokens taken from the cache instead of computed
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lookup(self, prompt: Sequence[int]) -> tuple[int, Layers | None]:
        """The longest kept prefix of ``prompt`` (at most all but its last token) and its
        states (views, never written to); ``(0, None)`` when nothing is shared."""
        if len(prompt) < 2 or self.max_bytes <= 0:
            return 0, None
        import torch

        query = torch.tensor(list(prompt), dtype=torch.long)
        with self._lock:
            self.lookups += 1
            best, best_key = 0, None
            for key, entry in self.entries.items():
                n = _common(entry.tokens, query)
                if n > best:
                    best, best_key = n, key
            best = min(best, len(prompt) - 1)
            if best_key is None or best <= 0:
                return 0, None
            self.entries.move_to_end(best_key)
            self.hits += 1
            layers = self.entries[best_key].layers
        return best, [(k[:, :, :best], v[:, :, :best]) for k, v in layers]

    def store(self, tokens: Sequence[int], layers: Layers) -> None:
        """Keep ``layers`` (states of ``tokens``, copied) unless they alone pass the bound;
        a kept sequence that ``tokens`` extends is dropped (the new one covers it)."""
        if self.max_bytes <= 0 or not tokens:
            return
        import torch

        kept = [(k.contiguous().clone(), v.contiguous().clone()) for k, v in layers]
        nbytes = sum(k.nbytes + v.nbytes for k, v in kept)
        if nbytes > self.max_bytes:
            return
        seq = torch.tensor(list(tokens), dtype=torch.long)
        with self._lock:
            for key, entry in list(self.entries.items()):
                if len(entry.tokens) <= len(seq) and _common(entry.tokens, seq) == len(
                    entry.tokens
                ):
                    self._drop(key)
            while self.entries and self.nbytes + nbytes > self.max_bytes:
                self._drop(next(iter(self.entries)))
            self._next += 1
            self.entries[self._next] = _Entry(seq, kept, nbytes)
            self.nbytes += nbytes

    def clear(self) -> None:
        """Forget every kept sequence (the weights changed)."""
        with self._lock:
            self.entries.clear()
            self.nbytes = 0

    def _drop(self, key: int) -> None:
        self.nbytes -= self.entries.pop(key).nbytes


def _common(a: torch.Tensor, b: torch.Tensor) -> int:
    """The length of the common prefix of two token vectors."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = (a[:n] != b[:n]).nonzero()
    return int(differ[0, 0]) if len(differ) else n


def layers_of(cache: Any) -> Layers | None:
    """The per-layer (keys, values) of a transformers ``DynamicCache`` whose layers are all
    plain full-attention layers, else None (such a cache is not kept)."""
    from transformers.cache_utils import DynamicLayer

    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer) is not DynamicLayer for layer in layers):
        return None
    if any(getattr(layer, "keys", None) is None for layer in layers):
        return None
    return [(layer.keys, layer.values) for layer in layers]


def batch_cache(
    prefix: PrefixCache | None, prompts: Sequence[Sequence[int]], width: int
) -> tuple[Any, list[int]]:
    """A ``DynamicCache`` for the left-padded batch of ``prompts`` (padded to ``width``)
    holding what every row can take from ``prefix``, and each row's count of prompt tokens
    taken from it; ``(None, zeros)`` when nothing is shared.

    The cache covers positions ``[0, C)`` with ``C`` the smallest over the rows of (padding +
    kept prefix); a row's padding gets zero states (masked out, so never read)."""
    zeros = [0] * len(prompts)
    if prefix is None:
        return None, zeros
    found = [prefix.lookup(p) for p in prompts]
    pads = [width - len(p) for p in prompts]
    covered = min(pad + n for pad, (n, _) in zip(pads, found, strict=True))
    if covered <= 0 or all(layers is None for _, layers in found):
        return None, zeros
    import torch
    from transformers import DynamicCache

    template = next(layers for _, layers in found if layers is not None)
    data = []
    for i in range(len(template)):
        keys, values = [], []
        for pad, (_, layers) in zip(pads, found, strict=True):
            keys.append(
                _row(template[i][0], None if layers is None else layers[i][0], pad, covered)
            )
            values.append(
                _row(template[i][1], None if layers is None else layers[i][1], pad, covered)
            )
        data.append((torch.cat(keys), torch.cat(values)))
    used = [max(0, covered - pad) for pad in pads]
    prefix.saved_tokens += sum(used)
    return DynamicCache(ddp_cache_data=data), used


def _row(like: torch.Tensor, kept: torch.Tensor | None, pad: int, covered: int) -> torch.Tensor:
    """One row's states over positions [0, covered): zeros for its padding, then kept ones."""
    import torch

    shape = (1, like.shape[1], covered, like.shape[3])
    out = torch.zeros(shape, dtype=like.dtype, device=like.device)
    if kept is not None and covered > pad:
        out[:, :, pad:covered] = kept[:, :, : covered - pad]
    return out


def remember_batch(
    prefix: PrefixCache | None,
    cache: Any,
    sequences: Any,
    pads: Sequence[int],
    width: int,
    stop_ids: Sequence[int] = (),
) -> None:
    """Keep each row's states from ``generate``'s final ``cache`` under the row's tokens in
    ``sequences`` (prompts left-padded by ``pads`` to ``width``, then the replies): prompt and
    reply, the padding cut off, and what the row was fed after the first ``stop_ids`` token
    of its reply (the batch went on without it) left out."""
    if prefix is None or prefix.max_bytes <= 0 or cache is None:  # None: an older transformers
        return
    layers = layers_of(cache)
    if layers is None:
        return
    length = layers[0][0].shape[2]  # every token fed: all but the last generated one
    stops = set(stop_ids)
    for row, pad in enumerate(pads):
        tokens = sequences[row, pad:length].tolist()
        end = len(tokens)
        for j in range(width - pad, len(tokens)):
            if tokens[j] in stops:
                end = j + 1
                break
        kept = [(k[row : row + 1, :, pad : pad + end], v[row : row + 1, :, pad : pad + end])
                for k, v in layers]  # fmt: skip
        prefix.store(tokens[:end], kept)
