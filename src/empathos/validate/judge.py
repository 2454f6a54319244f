"""The judge under validation: the sandbox's MDEP prompt and form, and the direct rating.

Every call goes through :class:`empathos.llm.ModelClient` (retries, structured output with
repair and re-asks, and the response cache when one is given), so a rerun of the same study
answers from the cache and an interrupted one resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from empathos.errors import ModelCallError
from empathos.llm import Message, ModelClient, as_messages
from empathos.prompts import judge_mdep_prompt
from empathos.rubric.forms import MDEPForm
from empathos.validate.points import EvalPoint
from empathos.validate.scorers import DirectRating, direct_prompt

__all__ = ["Judge", "JudgeFailure"]


@dataclass(frozen=True, slots=True)
class JudgeFailure:
    """A judge call that failed after its retries (the pair is left out, with this reason)."""

    reason: str


@dataclass
class Judge:
    """A named judge model; ``calls`` and ``cache_hits`` count what it was asked."""

    name: str
    client: ModelClient
    calls: int = 0
    cache_hits: int = 0

    async def mdep(self, point: EvalPoint) -> dict[str, int] | JudgeFailure:
        """The MDEP levels of the point's window, rated on the point's scenario."""
        prompt = judge_mdep_prompt(
            point.scenario,
            history=point.history,
            window=point.window,
            k=point.k,
            language=point.language,
        )
        try:
            res = await self.client.structured(as_messages(prompt.messages()), MDEPForm)
        except ModelCallError as exc:
            self.calls += 1
            return JudgeFailure(f"judge {self.name}: {exc.line()}")
        self.calls += 1
        self.cache_hits += int(bool(res.record.cache_hit))
        return res.value.levels()

    async def direct(self, point: EvalPoint) -> int | JudgeFailure:
        """One overall rating 1..10 of the point's reply (no rubric)."""
        text = direct_prompt(point.scenario, point.history[:-1], point.reply, point.language)
        try:
            res = await self.client.structured([Message(role="user", content=text)], DirectRating)
        except ModelCallError as exc:
            self.calls += 1
            return JudgeFailure(f"judge {self.name} (direct): {exc.line()}")
        self.calls += 1
        self.cache_hits += int(bool(res.record.cache_hit))
        return int(res.value.rating)
