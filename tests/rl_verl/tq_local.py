"""TransferQueue's key-value calls held in this process (tests only).

verl 0.9's V1 worker and trainer keep every sample in TransferQueue (``tq.kv_batch_put``,
``tq.kv_batch_get`` ...), a store of Ray actors. :class:`LocalKV` answers the same calls from a
dict, so verl's own V1 code (``AgentLoopWorkerTQ``, ``PPOTrainer._compute_advantage``,
``_compute_metrics``) runs on a CPU without a cluster: fields and tags per key as TransferQueue
keeps them, and a batch comes out packed by TransferQueue's own storage manager
(``AsyncSimpleStorageManager._pack_field_values``): every non-scalar tensor field a jagged nested
tensor even when its rows share one shape, as verl's trainer expects (``response_to_nested``
asserts it). verl's ``list_of_dict_to_tensordict`` stacks such rows densely instead, so a batch
whose responses were all one length failed there where TransferQueue would not.
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import NonTensorData, NonTensorStack, TensorDict
from transfer_queue import KVBatchMeta
from transfer_queue.storage.managers.simple_storage_manager import AsyncSimpleStorageManager


def _rows(fields: TensorDict | None, n: int) -> list[dict[str, Any]]:
    """A batch of fields as one dict per row."""
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    if fields is None:
        return rows
    for key in fields.keys():  # noqa: SIM118  (iterating a TensorDict yields its rows)
        value = fields.get(key)
        if isinstance(value, torch.Tensor):
            items = list(value.unbind(0))
        elif isinstance(value, NonTensorStack):
            items = value.tolist()
        elif isinstance(value, NonTensorData):
            items = [value.data] * n
        else:
            items = list(value)
        for row, item in zip(rows, items, strict=True):
            row[key] = item
    return rows


class LocalKV:
    """``init``, ``kv_put`` / ``kv_batch_put`` / ``kv_batch_get`` (and their ``async_``
    forms) of ``transfer_queue``, for one process."""

    def __init__(self) -> None:
        self.fields: dict[tuple[str, str], dict[str, Any]] = {}
        self.tags: dict[tuple[str, str], dict[str, Any]] = {}
        self.order: list[tuple[str, str]] = []

    def init(self, conf: Any = None) -> Any:
        return conf

    def _put(self, key: str, partition_id: str, fields: dict[str, Any], tag: dict | None) -> None:
        where = (partition_id, key)
        if where not in self.fields:
            self.order.append(where)
        self.fields.setdefault(where, {}).update(fields)
        self.tags.setdefault(where, {}).update(tag or {})

    def kv_put(self, key: str, partition_id: str, fields: Any = None, tag: dict | None = None
               ) -> None:  # fmt: skip
        self._put(key, partition_id, _rows(fields, 1)[0] if fields is not None else {}, tag)

    def kv_batch_put(self, keys: list[str], partition_id: str, fields: TensorDict | None = None,
                     tags: list[dict] | None = None) -> KVBatchMeta:  # fmt: skip
        rows = _rows(fields, len(keys))
        for i, key in enumerate(keys):
            self._put(key, partition_id, rows[i], tags[i] if tags else None)
        return KVBatchMeta(keys=list(keys), tags=[self.tags[(partition_id, k)] for k in keys],
                           partition_id=partition_id)  # fmt: skip

    def kv_batch_get(self, keys: list[str], partition_id: str,
                     select_fields: list[str] | str | None = None) -> TensorDict:  # fmt: skip
        rows = [self.fields[(partition_id, k)] for k in keys]
        if isinstance(select_fields, str):
            select_fields = [select_fields]
        names = select_fields or list(rows[0])
        present = [n for n in names if all(n in row for row in rows)]
        pack = AsyncSimpleStorageManager._pack_field_values
        return TensorDict({n: pack([row[n] for row in rows]) for n in present},
                          batch_size=len(rows))  # fmt: skip

    async def async_kv_put(self, *args: Any, **kwargs: Any) -> None:
        self.kv_put(*args, **kwargs)

    async def async_kv_batch_put(self, *args: Any, **kwargs: Any) -> KVBatchMeta:
        return self.kv_batch_put(*args, **kwargs)

    async def async_kv_batch_get(self, *args: Any, **kwargs: Any) -> TensorDict:
        return self.kv_batch_get(*args, **kwargs)

    def samples(self, partition_id: str = "train") -> KVBatchMeta:
        """The finished samples (not the prompts), in the order they were stored."""
        keys = [k for p, k in self.order
                if p == partition_id and self.tags[(p, k)].get("status") == "success"]  # fmt: skip
        return KVBatchMeta(keys=keys, tags=[self.tags[(partition_id, k)] for k in keys],
                           partition_id=partition_id)  # fmt: skip
