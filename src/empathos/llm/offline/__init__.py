"""The bundled offline model (SmolLM2-135M-Instruct on CPU) as a chat backend.

Modules in dependency order: ``model`` (find, convert and load the model), ``constrained``
(schema-constrained JSON and tool calls over any decoder), ``decoder`` (the model as that
decoder), ``batcher`` (plain chats batched into one ``generate``), ``backend`` (the backend
that the model client calls).
"""

from empathos.llm.offline.backend import OfflineBackend
from empathos.llm.offline.model import (
    GGUF_FILE,
    OFFLINE_MODEL_ID,
    OfflineModel,
    cache_dir,
    load_offline_model,
)

__all__ = [
    "GGUF_FILE",
    "OFFLINE_MODEL_ID",
    "OfflineBackend",
    "OfflineModel",
    "cache_dir",
    "load_offline_model",
]
