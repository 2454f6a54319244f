"""What a plain ``generate`` call gets beyond temperature and top_p.

- OpenAI's ``frequency_penalty`` and ``presence_penalty``, as OpenAI defines them: the
  next-token logit of every token already in the *reply* (not the prompt) is lowered by
  ``count * frequency_penalty + presence_penalty`` (before temperature scaling);
- ``stop`` strings (transformers' ``stop_strings``): generation ends once one appears;
- a cancel check per batch row (a client that went away, a server that shuts down): the row
  is finished at the next step, and the call ends once every row is.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from empathos.llm.types import ChatRequest

__all__ = ["generate_extras", "penalties_of"]


def penalties_of(request: ChatRequest) -> tuple[float, float]:
    """``(frequency_penalty, presence_penalty)`` of a request, 0 where unset."""
    params = request.params
    return float(params.get("frequency_penalty", 0.0)), float(params.get("presence_penalty", 0.0))


def generate_extras(
    lm: Any,
    requests: Sequence[ChatRequest],
    prompt_width: int,
    cancel: Sequence[threading.Event] | None,
) -> dict[str, Any]:
    """Extra ``generate`` keyword arguments for a batch sharing its sampling settings."""
    import torch
    from transformers import (
        LogitsProcessor,
        LogitsProcessorList,
        StoppingCriteria,
        StoppingCriteriaList,
    )

    class _Penalties(LogitsProcessor):
        def __init__(self, frequency: float, presence: float) -> None:
            self.frequency, self.presence = frequency, presence

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            reply = input_ids[:, prompt_width:]
            if reply.shape[1] == 0:
                return scores
            counts = torch.zeros_like(scores).scatter_add_(
                1, reply, torch.ones_like(reply, dtype=scores.dtype)
            )
            return scores - counts * self.frequency - (counts > 0).to(scores.dtype) * self.presence

    class _Cancelled(StoppingCriteria):
        def __init__(self, events: Sequence[threading.Event]) -> None:
            self.events = events

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.tensor([e.is_set() for e in self.events], dtype=torch.bool)

    extras: dict[str, Any] = {}
    frequency, presence = penalties_of(requests[0])
    if frequency or presence:
        extras["logits_processor"] = LogitsProcessorList([_Penalties(frequency, presence)])
    if cancel is not None:
        extras["stopping_criteria"] = StoppingCriteriaList([_Cancelled(cancel)])
    if requests[0].stop:
        extras["stop_strings"] = list(requests[0].stop)
        extras["tokenizer"] = lm.tokenizer
    return extras
