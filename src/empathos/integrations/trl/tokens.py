"""One EMPA dialogue as one TRL completion: the token layout (no TRL import).

TRL 1.16's ``rollout_func`` returns, per completion, ``prompt_ids`` and ``completion_ids`` (the
trainer re-scores ``prompt_ids + completion_ids`` in one forward pass), the policy's sampling
``logprobs`` (one per completion token) and ``env_mask`` (1 on tokens the model generated, 0 on
tokens the environment injected). A dialogue is laid out as:

- **prompt**: the chat-templated opening the policy saw for turn 1 (its system prompt when the
  sandbox gives one, the user's first line, the generation prompt);
- **completion**: reply 1 (the ids exactly as sampled, its end-of-turn token included when the
  model emitted it; ``env_mask`` 1), then the template's text closing that turn and opening the
  next (``<|im_end|>`` when the reply was cut, the user's next line, the next generation
  prompt; ``env_mask`` 0, log-prob 0), then reply 2, and so on. It ends after the last reply.

Turn k's reply is ``completion_ids[start:end]`` with ``(start, end) = spans[k]``: recorded when
the tokens are written, never inferred. Each reply is generated from exactly the tokens before
it in this layout, so the log-probabilities TRL recomputes are those of the sampled policy.

The joining text comes from the tokenizer's own chat template: the template rendered with a
placeholder reply, and with the placeholder and the next user line, must agree up to the
placeholder (an append-only template); otherwise :func:`next_turn_ids` raises
:class:`ConfigError`. A template that rewrites earlier assistant turns (one that drops
reasoning from them, say) makes the layout differ from what the model would see if the whole
history were templated anew: the layout keeps what was sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from empathos.errors import ConfigError

__all__ = ["DialogueTokens", "next_turn_ids", "opening_ids"]

_MARK = "\u2063empathos-reply\u2063"


def _render(tokenizer: Any, messages: list[dict[str, str]], generation: bool) -> str:
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation)
    return str(text)


def _encode(tokenizer: Any, text: str) -> list[int]:
    return [int(x) for x in tokenizer(text, add_special_tokens=False)["input_ids"]]


def opening_ids(tokenizer: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The chat-templated prompt of turn 1 (``messages``: role/content dicts), generation
    prompt included."""
    return _encode(tokenizer, _render(tokenizer, list(messages), True))


def next_turn_ids(tokenizer: Any, user_line: str, reply_closed_by: int | None) -> list[int]:
    """The tokens between a reply and the next one: the template's end of the assistant turn,
    ``user_line`` as the user's turn, and the next generation prompt.

    ``reply_closed_by``: the reply's last token when the model ended it with an end-of-turn
    token (it is not repeated), else None (the turn is closed here). Raises
    :class:`ConfigError` when the chat template is not append-only."""
    opening = [{"role": "user", "content": "."}, {"role": "assistant", "content": _MARK}]
    head = _render(tokenizer, opening, False)
    full = _render(tokenizer, [*opening, {"role": "user", "content": user_line}], True)
    cut = head.find(_MARK)
    if cut < 0 or full[: cut + len(_MARK)] != head[: cut + len(_MARK)]:
        raise ConfigError(
            "the tokenizer's chat template does not render a dialogue append-only (a later "
            "turn changes the text of an earlier one): the dialogue cannot be one completion",
            field="processing_class.chat_template",
        )
    ids = _encode(tokenizer, full[cut + len(_MARK) :])
    if reply_closed_by is not None and ids and ids[0] == reply_closed_by:
        ids = ids[1:]
    return ids


@dataclass
class DialogueTokens:
    """The token state of one dialogue in the layout above, built as the turns come."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)

    @property
    def context(self) -> list[int]:
        """Everything so far: what the next reply is generated from."""
        return self.prompt_ids + self.completion_ids

    def add_reply(self, ids: Sequence[int], logprobs: Sequence[float]) -> None:
        """Append the policy's reply (``env_mask`` 1) and record its span."""
        if len(ids) != len(logprobs):
            raise ValueError(f"{len(ids)} reply tokens but {len(logprobs)} log-probs")
        start = len(self.completion_ids)
        self.completion_ids.extend(int(x) for x in ids)
        self.env_mask.extend([1] * len(ids))
        self.logprobs.extend(float(x) for x in logprobs)
        self.spans.append((start, len(self.completion_ids)))

    def add_context(self, ids: Sequence[int]) -> None:
        """Append tokens the environment wrote (``env_mask`` 0, log-prob 0)."""
        self.completion_ids.extend(int(x) for x in ids)
        self.env_mask.extend([0] * len(ids))
        self.logprobs.extend([0.0] * len(ids))
