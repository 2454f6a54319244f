"""The local policy backend: a Hugging Face causal LM (optionally with a LoRA adapter) in-process.

It plays the model under test with no server, for ``empathos run`` (``kind: local`` or
``--policy PATH``), and generates the trainer's rollouts (:mod:`empathos.train` holds the
training side: new LoRA adapters, trainable loading, the forward pass with gradient).
Generation is batched across dialogues (left-padded) and records, for every reply, the exact
prompt token ids, the generated token ids and their log-probabilities under the policy (raw
logits, before any temperature: the numbers a fresh forward pass gives, which is what the
PPO ratio needs).

- :func:`load_policy` loads a directory (or the bundled SmolLM2-135M when ``path`` is None or
  ``"smollm2-135m-instruct"``), optionally with a saved LoRA adapter, frozen.
- :meth:`LocalPolicy.generate` samples replies for many prompts at once.
- :class:`~empathos.llm.local_backend.LocalBackend` serves plain chats from a policy to a
  :class:`~empathos.llm.ModelClient`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from empathos.errors import ConfigError
from empathos.llm.offline.model import converted_dir, load_offline_model, set_torch_threads
from empathos.llm.offline.prefix_cache import PrefixCache, batch_cache, remember_batch
from empathos.llm.types import Message

__all__ = [
    "BUNDLED",
    "CausalLM",
    "Generation",
    "LocalPolicy",
    "cached_policy",
    "load_causal_lm",
    "load_policy",
    "resolve_model_dir",
]

BUNDLED = "smollm2-135m-instruct"
# Where a model's config gives its context window, in the order looked at; a config with none
# of them gets _FALLBACK_CONTEXT.
_CONTEXT_FIELDS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")
_FALLBACK_CONTEXT = 2048


@dataclass(frozen=True)
class Generation:
    """One sampled reply: prompt and reply token ids, log-probs per reply token, the text."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    text: str
    finished: bool
    cached_tokens: int = 0  # prompt tokens taken from the prefix cache


def _bundled_dir() -> Path:
    """The converted float32 copy of the bundled model (converted on first use)."""
    target = converted_dir()
    if not (target / "model.safetensors").is_file():
        load_offline_model()  # converts and saves the copy
    if not (target / "model.safetensors").is_file():
        raise ConfigError(f"the bundled model could not be saved under {target}", field="policy")
    return target


def _check_causal_lm(path: Path, where: str) -> None:
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if not path.is_dir():
        raise ConfigError(f"{path} is not a directory", field=where)
    try:
        config = AutoConfig.from_pretrained(path)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"{path} is not a Hugging Face model directory: {first}", field=where
        ) from None
    if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ConfigError(
            f"{path} holds a {config.model_type!r} model, not a causal language model",
            field=where,
        )


def _is_adapter_dir(path: Path) -> bool:
    return (path / "adapter_config.json").is_file()


class CausalLM(Protocol):
    """What empathos asks of a causal LM: a ``transformers`` model, or a ``peft`` model
    around one (both torch modules)."""

    training: bool

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def generate(self, *args: Any, **kwargs: Any) -> Any: ...

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]: ...

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, torch.nn.Parameter]]: ...

    def train(self, mode: bool = True) -> Any: ...

    def eval(self) -> Any: ...

    def requires_grad_(self, requires_grad: bool = True) -> Any: ...

    def save_pretrained(self, save_directory: Any, **kwargs: Any) -> Any: ...


@dataclass
class LocalPolicy:
    """A causal LM and its tokenizer on one device, with a lock that serialises its use."""

    model: CausalLM
    tokenizer: Any
    name: str
    device: torch.device
    dtype: torch.dtype
    lora: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    # key/value states of recent prompts, reused while the weights stay as they were
    prefix: PrefixCache = field(default_factory=PrefixCache)
    _weights_seen: int = -1

    @property
    def context_tokens(self) -> int:
        """The model's context window (prompt and reply together), from its config's
        ``max_position_embeddings`` (or the like; 2,048 when the config names none)."""
        config = getattr(self.model, "config", None)
        for name in _CONTEXT_FIELDS:
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return _FALLBACK_CONTEXT

    @property
    def eos_ids(self) -> list[int]:
        """Token ids that end a reply (the tokenizer's and the generation config's)."""
        ids = {int(self.tokenizer.eos_token_id)}
        gen = getattr(self.model, "generation_config", None)
        extra = getattr(gen, "eos_token_id", None)
        if isinstance(extra, int):
            ids.add(extra)
        elif isinstance(extra, list):
            ids.update(int(x) for x in extra)
        return sorted(ids)

    def prompt_ids(self, messages: Sequence[Message], max_new: int) -> list[int]:
        """The chat-templated prompt ids, keeping the most recent tokens if too long."""
        ids = self.tokenizer.apply_chat_template(
            [m.model_dump() for m in messages],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
        )["input_ids"]
        budget = max(64, self.context_tokens - max_new)
        return [int(x) for x in ids[-budget:]]

    def _weights_version(self) -> int:
        """A number that changes whenever a trainable weight is written in place (an
        optimizer step): torch counts each tensor's in-place writes."""
        return sum(p._version for p in self.model.parameters() if p.requires_grad)

    def _fresh_prefix(self) -> PrefixCache:
        """The prefix cache, emptied first if the weights changed since it was filled."""
        version = self._weights_version()
        if version != self._weights_seen:
            self.prefix.clear()
            self._weights_seen = version
        return self.prefix

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        *,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        batch_size: int = 16,
        logprob_temperature: float = 1.0,
    ) -> list[Generation]:
        """Sample one reply per prompt (greedy when ``temperature`` is 0), in batches.

        Sampling draws from torch's global generator: seed it (``torch.manual_seed``) for
        reproducible rollouts. Log-probabilities are ``log_softmax(logits /
        logprob_temperature)`` of the raw logits: of the raw policy by default (1), of the
        sampling distribution before top-p when given the sampling temperature."""
        out: list[Generation] = []
        for i in range(0, len(prompts), max(1, batch_size)):
            chunk = prompts[i : i + max(1, batch_size)]
            out.extend(
                self._generate_batch(chunk, max_new_tokens, temperature, top_p, logprob_temperature)
            )
        return out

    def _generate_batch(
        self,
        prompts: Sequence[Sequence[int]],
        max_new: int,
        temperature: float,
        top_p: float,
        logprob_temperature: float = 1.0,
    ) -> list[Generation]:
        pad = int(self.tokenizer.pad_token_id or self.tokenizer.eos_token_id)
        eos = self.eos_ids
        width = max(len(p) for p in prompts)
        pads = [width - len(p) for p in prompts]
        ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "do_sample": temperature > 0,
            "return_dict_in_generate": True,
            "output_logits": True,
            "pad_token_id": pad,
            "eos_token_id": eos,
        }
        if temperature > 0:
            kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
        with self.lock, torch.inference_mode():
            was_training = self.model.training
            self.model.eval()
            prefix = self._fresh_prefix()
            cache, used = batch_cache(prefix, prompts, width)
            if cache is not None:
                kwargs["cache"] = cache
            try:
                res = self.model.generate(
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device), **kwargs
                )
            finally:
                self.model.train(was_training)
            remember_batch(prefix, getattr(res, "cache", None), res.sequences, pads, width, eos)
        new = res.sequences[:, width:].cpu()
        if res.logits:
            logits = torch.stack([x.float() for x in res.logits], dim=1).cpu()  # (B, N, V)
            logp = torch.log_softmax(logits / (logprob_temperature or 1.0), dim=-1)
            chosen = logp.gather(2, new[:, : logits.shape[1], None])[..., 0]
        else:
            chosen = torch.zeros(new.shape)
        return _generations(self.tokenizer, new, chosen, prompts, used, eos)


def _generations(
    tokenizer: Any,
    new: torch.Tensor,
    chosen: torch.Tensor,
    prompts: Sequence[Sequence[int]],
    used: Sequence[int],
    eos: list[int],
) -> list[Generation]:
    """Each row's reply (cut after its first end token), with its log-probs and text."""
    gens = []
    for row, lp_row, prompt, n_cached in zip(
        new.tolist(), chosen.tolist(), prompts, used, strict=True
    ):
        n = len(row)
        finished = False
        for j, tok in enumerate(row):
            if tok in eos:
                n, finished = j + 1, True
                break
        toks = [int(x) for x in row[:n]]
        gens.append(
            Generation(
                prompt_ids=list(prompt),
                token_ids=toks,
                logprobs=[float(x) for x in lp_row[:n]],
                text=tokenizer.decode(toks, skip_special_tokens=True).strip(),
                finished=finished,
                cached_tokens=n_cached,
            )
        )
    return gens


_POLICIES: dict[tuple[str, str | None], LocalPolicy] = {}
_POLICIES_LOCK = threading.Lock()


def resolve_model_dir(
    path: str | Path | None, adapter: str | Path | None, where: str
) -> tuple[Path, str, Path | None]:
    """The model directory to load, the policy's name and the adapter to apply.

    ``path``: a model directory, or None / ``"smollm2-135m-instruct"`` for the bundled model;
    a directory holding an adapter (``adapter_config.json``) names its base model and the
    adapter. Bad input raises :class:`ConfigError` naming ``where``."""
    adapter_dir = Path(adapter) if adapter is not None else None
    if path is None or str(path) == BUNDLED:
        base, name = _bundled_dir(), BUNDLED
    else:
        base, name = Path(path), str(path)
        if base.is_dir() and _is_adapter_dir(base) and adapter_dir is None:
            info = json.loads((base / "adapter_config.json").read_text(encoding="utf-8"))
            adapter_dir = base
            parent = info.get("base_model_name_or_path")
            base = _bundled_dir() if parent in (None, BUNDLED) else Path(str(parent))
    if name != BUNDLED or not (base / "model.safetensors").is_file():
        _check_causal_lm(base, where)
    if adapter_dir is not None and not _is_adapter_dir(adapter_dir):
        raise ConfigError(f"{adapter_dir} holds no adapter_config.json (not a LoRA adapter)",
                          field=f"{where}.adapter")  # fmt: skip
    return base, name, adapter_dir


def load_causal_lm(
    base: Path, *, device: str | None, bf16: bool | None, where: str
) -> tuple[Any, Any, torch.device, torch.dtype]:
    """The model (moved to its device) and tokenizer of a causal-LM directory.

    bf16 on a GPU, float32 on the CPU unless ``bf16`` says otherwise. On the CPU, torch runs
    as many intra-op threads as ``EMPATHOS_TORCH_THREADS`` says (as the offline model does:
    by default every usable core, at most four)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if dev.type == "cpu":
        set_torch_threads()
    use_bf16 = bf16 if bf16 is not None else dev.type == "cuda"
    dtype = torch.bfloat16 if use_bf16 else torch.float32
    model: Any
    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot load {base}: {first}", field=where) from None
    if tokenizer.chat_template is None:
        raise ConfigError(f"{base} has no chat template (not an instruct/chat model)", field=where)
    model.to(dev)
    return model, tokenizer, dev, dtype


def load_policy(
    path: str | Path | None = None,
    *,
    adapter: str | Path | None = None,
    device: str | None = None,
    bf16: bool | None = None,
    where: str = "policy",
) -> LocalPolicy:
    """Load a causal LM for generation, frozen (training: :mod:`empathos.train.policy`).

    ``path`` and ``adapter`` as in :func:`resolve_model_dir`; ``device`` and ``bf16`` as in
    :func:`load_causal_lm`. Bad input raises :class:`ConfigError` naming ``where``."""
    base, name, adapter_dir = resolve_model_dir(path, adapter, where)
    model, tokenizer, dev, dtype = load_causal_lm(base, device=device, bf16=bf16, where=where)
    if adapter_dir is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=False)
    model.requires_grad_(False)
    model.eval()
    return LocalPolicy(
        model=model,
        tokenizer=tokenizer,
        name=name,
        device=dev,
        dtype=dtype,
        lora=adapter_dir is not None,
    )


def cached_policy(path: str | None, adapter: str | None = None) -> LocalPolicy:
    """A process-wide policy per (path, adapter), for serving (not for training)."""
    key = (path or BUNDLED, adapter)
    with _POLICIES_LOCK:
        if key not in _POLICIES:
            _POLICIES[key] = load_policy(path, adapter=adapter, where="roles.model_under_test")
        return _POLICIES[key]
