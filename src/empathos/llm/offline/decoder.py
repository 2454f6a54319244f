"""The offline model as a :class:`~empathos.llm.offline.constrained.Decoder`.

Keeps the prompt and the JSON written so far in a key/value cache; ``choose`` scores each
allowed option by its summed token log-likelihood (then rolls the cache back), free strings
and numbers are decoded greedily under a cap and rewritten as clean JSON literals.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

from empathos.llm.offline.constrained import build_json, build_tool_call
from empathos.llm.offline.json_prefix import JsonObjectPrefix
from empathos.llm.offline.model import OfflineModel
from empathos.llm.offline.prefix_cache import layers_of
from empathos.llm.types import ChatRequest, RawReply, RawToolCall

__all__ = ["TorchDecoder", "constrained_reply", "json_object_reply"]

_TOP_K = 64  # a json_object step keeps the best of the model's top-k tokens the grammar accepts

_MAX_DIGITS = 9
_NO_REPEAT_NGRAM = 3  # free-text fields never repeat a 3-token sequence


def _unescaped_quote(text: str) -> int:
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            return i
    return -1


def _repeats(tokens: list[int], n: int = _NO_REPEAT_NGRAM) -> list[int]:
    """Tokens that would repeat an n-gram already in ``tokens`` (greedy text loops otherwise)."""
    if len(tokens) < n:
        return []
    tail = tokens[len(tokens) - n + 1 :]
    return [tokens[i + n - 1] for i in range(len(tokens) - n + 1) if tokens[i : i + n - 1] == tail]


class TorchDecoder:
    """Constrained decoding over one prompt with the offline model (call under its lock)."""

    def __init__(self, lm: OfflineModel, prompt: list[int], string_cap: int | None = None) -> None:
        from transformers import DynamicCache

        self.lm = lm
        self.sets = lm.token_sets()
        self.eos = int(lm.tokenizer.eos_token_id)
        # the longest prefix of the prompt kept by the model's prefix cache is not computed again
        self.cached, kept = lm.prefix.lookup(prompt)
        self.cache = DynamicCache(ddp_cache_data=kept) if kept else DynamicCache()
        self.ids: list[int] = list(prompt[: self.cached])
        self.logits: Any = None
        self._feed(prompt[self.cached :])
        lm.prefix.saved_tokens += self.cached
        kept_now = layers_of(self.cache)
        if kept_now is not None:
            lm.prefix.store(prompt, kept_now)
        self.prompt_len = len(prompt)
        self.string_cap = string_cap

    @property
    def generated(self) -> int:
        """Tokens written after the prompt."""
        return len(self.ids) - self.prompt_len

    def _tok(self, text: str) -> list[int]:
        return list(self.lm.tokenizer.encode(text, add_special_tokens=False))

    def _feed(self, new: list[int], all_logits: bool = False) -> Any:
        """Extend the (in-place) cache with ``new``; logits of every position on request.

        Only the last position's logits are computed otherwise: the output layer over the
        whole vocabulary is a fifth of the model, so a 2,000-token prompt would pay it 2,000
        times for nothing."""
        import torch

        if not new:
            return None
        out = self.lm.model(
            input_ids=torch.tensor([new]),
            cache=self.cache,
            use_cache=True,
            logits_to_keep=0 if all_logits else 1,
        )
        self.ids.extend(new)
        self.logits = out.logits[0, -1].float()
        return out.logits[0].float()

    def _rollback(self, length: int, logits: Any) -> None:
        extra = len(self.ids) - length
        if extra > 0:
            self.cache.crop(-extra)
            del self.ids[length:]
        self.logits = logits

    def emit(self, text: str) -> None:
        """Append fixed text."""
        self._feed(self._tok(text))

    def choose(self, options: list[str]) -> int:
        """The option with the highest summed log-likelihood, appended."""
        import torch

        base, saved = len(self.ids), self.logits
        first = torch.log_softmax(saved, dim=-1)
        scores: list[float] = []
        for option in options:
            toks = self._tok(option)
            score = float(first[toks[0]])
            if len(toks) > 1:
                logp = torch.log_softmax(self._feed(toks[:-1], all_logits=True), dim=-1)
                score += float(sum(logp[i, toks[i + 1]] for i in range(len(toks) - 1)))
                self._rollback(base, saved)
            scores.append(score)
        best = max(range(len(options)), key=scores.__getitem__)
        self.emit(options[best])
        return best

    def free_string(self, max_tokens: int) -> str:
        """Greedy text up to the closing quote or the cap, appended as a JSON literal."""
        if self.string_cap is not None:
            max_tokens = max(1, min(max_tokens, self.string_cap))
        base, saved = len(self.ids), self.logits
        self.emit('"')
        fed: list[int] = []
        text = ""
        for step in range(max_tokens):
            logits = self.logits.clone()
            if step == 0:  # no empty string: the first token must open some text
                logits[self.sets["quote"]] = float("-inf")
                logits[self.eos] = float("-inf")
            for banned in _repeats(fed):
                logits[banned] = float("-inf")
            token = int(logits.argmax())
            if token == self.eos:
                break
            piece = self.lm.tokenizer.decode([*fed, token], skip_special_tokens=True)
            cut = _unescaped_quote(piece)
            if cut >= 0:
                text = piece[:cut]
                break
            text = piece
            fed.append(token)
            self._feed([token])
        try:
            value = json.loads(f'"{text}"')
        except ValueError:
            value = text.replace("\\", "")
        clean = value.strip() or "..."
        literal = json.dumps(clean, ensure_ascii=False)
        if clean == text and literal == f'"{text}"' and self.lm.tokenizer.decode(fed) == text:
            self.emit('"')  # the cache already holds the text: just close the string
        else:
            self._rollback(base, saved)
            self.emit(literal)
        return literal

    def number(self, low: float | None, high: float | None, integer: bool) -> str:
        """Greedy digits while a digit is the model's first choice, clamped to the bounds."""
        base, saved = len(self.ids), self.logits
        digits = self.sets["digits"]
        written = ""
        for step in range(_MAX_DIGITS):
            logits = self.logits
            token = int(digits[int(logits[digits].argmax())])
            if step > 0 and int(logits.argmax()) != token:
                break
            written += self.lm.tokenizer.decode([token])
            self._feed([token])
        self._rollback(base, saved)
        value = float(int(written or "0"))
        if low is not None:
            value = max(value, low)
        if high is not None:
            value = min(value, high)
        literal = str(int(value)) if integer else json.dumps(value)
        self.emit(literal)
        return literal


def constrained_reply(lm: OfflineModel, prompt: list[int], request: ChatRequest) -> RawReply:
    """A structured reply or a tool call, valid by construction."""
    cap = request.params.get("max_tokens")
    decoder = TorchDecoder(lm, prompt, string_cap=int(cap) if cap is not None else None)
    if request.tools:
        name, arguments = build_tool_call([(t.name, t.parameters) for t in request.tools], decoder)
        return RawReply(
            tool_calls=[RawToolCall(id="call_0", name=name, arguments=arguments)],
            input_tokens=len(prompt),
            output_tokens=decoder.generated,
            cached_tokens=decoder.cached,
            finish_reason="tool_calls",
        )
    assert request.response_schema is not None
    text = build_json(request.response_schema, decoder)
    return RawReply(
        content=text,
        input_tokens=len(prompt),
        output_tokens=decoder.generated,
        cached_tokens=decoder.cached,
        finish_reason="stop",
    )


def _by_likelihood(logits: Any) -> Iterator[int]:
    """Token ids, most likely first: the top ``_TOP_K``, then (rarely needed: when none of
    them can continue the object, e.g. a ``{`` the model would not start with) the rest."""
    import torch

    top = torch.topk(logits, _TOP_K).indices.tolist()
    yield from top
    seen = set(top)
    yield from (t for t in torch.argsort(logits, descending=True).tolist() if t not in seen)


def json_object_reply(
    lm: OfflineModel,
    prompt: list[int],
    max_tokens: int,
    cancel: threading.Event | None = None,
) -> RawReply:
    """One JSON object (``response_format: json_object``), valid by construction.

    Each step takes the model's most likely token whose text can continue a non-empty JSON
    object (:class:`JsonObjectPrefix`), searching past the top ``_TOP_K`` only when none of
    them can; the object ends when the model closes it (``finish_reason`` stop), or is closed
    with the shortest completion when the token budget would not leave room for it (length;
    the reply may run a few tokens past a tiny ``max_tokens``)."""
    cap = max_tokens
    decoder = TorchDecoder(lm, prompt)
    state = JsonObjectPrefix(nonempty=True)
    texts: list[str] = decoder.sets["texts"]

    def closing_tokens(prefix: JsonObjectPrefix) -> int:
        rest = prefix.closing()
        return len(decoder._tok(rest)) if rest else 0

    finish = "stop"
    while not state.done:
        if cancel is not None and cancel.is_set():
            finish = "cancelled"
            break
        chosen: tuple[int, JsonObjectPrefix] | None = None
        for token in _by_likelihood(decoder.logits):
            text = texts[token]
            if not text or token == decoder.eos:
                continue
            trial = state.copy()
            if not trial.feed(text):
                continue
            if decoder.generated + 1 + closing_tokens(trial) <= cap:
                chosen = (token, trial)
            break  # the best acceptable token does not fit: close now
        if chosen is None:
            decoder.emit(state.closing())
            finish = "length"
            break
        decoder._feed([chosen[0]])
        state = chosen[1]
    text = lm.tokenizer.decode(decoder.ids[decoder.prompt_len :], skip_special_tokens=True)
    return RawReply(
        content=text.strip(),
        input_tokens=len(prompt),
        output_tokens=decoder.generated,
        cached_tokens=decoder.cached,
        finish_reason=finish,
    )
