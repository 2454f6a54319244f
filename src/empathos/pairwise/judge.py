"""The pairwise judge call: two whole dialogues of one scenario and trial, one order.

:class:`PairJudge` is ours (template ``judge_pairwise.<lang>``, versioned like every
template; the reply is :class:`~empathos.pairwise.model.PairForm`, validated, repaired and
re-asked by the model client). The client brings the endpoint's retries, concurrency
limit, response cache and prices, so a pairwise call is cached and costed like any judge
call. A failed call becomes a :class:`Judgement` with its error and its call record (it
was paid for), never a made-up verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from empathos.errors import ModelCallError
from empathos.llm import ModelClient, record_of
from empathos.pairwise.model import AXES, Item, Judgement, PairForm
from empathos.pairwise.transcript import Truncation, render_transcript, seen_replies
from empathos.prompts.render import LANGUAGES, load_template, render_chat

__all__ = ["Judge", "PairJudge", "Profile"]


class Judge(Protocol):
    """Judges one order of one pair."""

    name: str

    @property
    def fingerprint(self) -> str:
        """What shapes its verdicts besides the model: the prompt's versions, truncation."""
        ...

    async def __call__(self, first: Item, second: Item) -> Judgement:
        """The judgement of ``first`` (shown first) against ``second``."""
        ...


@dataclass(frozen=True, slots=True)
class Profile:
    """What the judge is told about the person of a scenario, in the scenario's language."""

    text: str
    language: str = "en"


@dataclass
class PairJudge:
    """Our judge over ``client``; ``profiles`` by scenario id (a scenario without one is
    judged from the dialogues alone, in English)."""

    client: ModelClient
    name: str
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    style: str = "full"
    rule: Truncation = field(default_factory=Truncation)

    @property
    def fingerprint(self) -> str:
        """The templates' ids and versions (both languages) and the truncation."""
        tpls = [load_template("judge_pairwise", lang, self.style) for lang in LANGUAGES]
        names = ", ".join(f"{t.id} v{t.version}" for t in tpls)
        return f"{names}; truncation {self.rule.message_chars}/{self.rule.dialogue_chars}"

    def seen(self, item: Item) -> str:
        """The model's replies of ``item`` as this judge's prompt shows them (style control)."""
        profile = self.profiles.get(item.scenario_id, Profile("(no profile given)"))
        return seen_replies(item, profile.language, self.rule)

    async def __call__(self, first: Item, second: Item) -> Judgement:
        profile = self.profiles.get(first.scenario_id, Profile("(no profile given)"))
        lang = profile.language
        prompt = render_chat(
            "judge_pairwise", lang, style=self.style, profile=profile.text,
            first=render_transcript(first.transcript, lang, self.rule),
            second=render_transcript(second.transcript, lang, self.rule),
        )  # fmt: skip
        base = Judgement(
            scenario_id=first.scenario_id, trial=first.trial, first=first.model,
            second=second.model, judge=self.name, template_id=prompt.id,
            template_version=prompt.version,
        )  # fmt: skip
        try:
            result = await self.client.structured(prompt.messages(), PairForm)
        except ModelCallError as exc:
            return base.model_copy(update={"error": exc.line(), "call": record_of(exc)})
        form = result.value
        picks = {a: getattr(form, a) for a in AXES}
        return base.model_copy(update={"picks": picks, "call": result.record})
