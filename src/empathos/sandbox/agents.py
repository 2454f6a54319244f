"""The four roles. Each implements one async method: ``act(view, state) -> (output, state)``.

The view (built by :mod:`empathos.sandbox.state`) holds exactly what the role may see; the
prompt is rendered from the view alone through :mod:`empathos.prompts`. The state comes in
frozen and goes out as a new state with the call's record added. A model call that still fails
after the client's retries is returned as a :class:`Failure` (never raised), with its failed
call record kept in the state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, cast

import orjson

from empathos.errors import ModelCallError
from empathos.llm import (
    CallRecord,
    ChatModel,
    Message,
    as_messages,
    prompt_style_of,
    record_of,
)
from empathos.prompts import (
    ChatPrompt,
    RenderedPrompt,
    director_prompt,
    judge_iedr_prompt,
    judge_mdep_prompt,
    user_prompt,
)
from empathos.records import IndicatorRating, ModelCallRecord
from empathos.rubric.forms import IEDRForm, MDEPForm
from empathos.sandbox.actions import DIRECTOR_SPECS
from empathos.sandbox.actions import DirectorAction as ToolAction
from empathos.sandbox.director_rules import rule_action
from empathos.sandbox.state import DialogueState, DirectorView, JudgeView, TestedView, UserView

__all__ = [
    "OUTPUT_KEPT",
    "Agent",
    "DirectorAgent",
    "DirectorDecision",
    "Failure",
    "JudgeAgent",
    "Ratings",
    "TestedAgent",
    "TestedReply",
    "UserAgent",
    "call_record",
    "clip",
]

V_contra = TypeVar("V_contra", contravariant=True)
O_co = TypeVar("O_co", covariant=True)
Ratings = dict[str, IndicatorRating]
AnyPrompt = RenderedPrompt | ChatPrompt


#: How much of an unusable reply a failed call's record keeps (``metadata.output``).
OUTPUT_KEPT = 2000


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Failure:
    """A role could not produce its output: the model call failed after its retries.
    ``output``: the model's last reply when it was there but unusable (clipped)."""

    reason: str
    output: str | None = None


class Agent(Protocol[V_contra, O_co]):
    """One role: a view and a frozen state in, the output (or a Failure) and a new state out."""

    role: str

    async def act(
        self, view: V_contra, state: DialogueState
    ) -> tuple[O_co | Failure, DialogueState]:
        """Produce this role's output for one step."""
        ...


def _sha(messages: Sequence[Message]) -> str:
    # SHA-256 of the compact UTF-8 JSON of [{"role": ..., "content": ...}, ...]
    text = orjson.dumps([{"role": m.role, "content": m.content} for m in messages])
    return hashlib.sha256(text).hexdigest()


def call_record(
    rec: CallRecord,
    *,
    turn: int,
    prompt: AnyPrompt | None,
    messages: Sequence[Message],
    output: str | None = None,
) -> ModelCallRecord:
    """The dialogue record's entry for one call (prompt hash + template id and version)."""
    meta: dict[str, object] = {
        "kind": rec.kind,
        "backend": rec.backend,
        "attempts": rec.attempts,
        "reasks": rec.reasks,
        "repaired": rec.repaired,
        "started_at": rec.started_at,
        "messages_sha256": _sha(messages),
    }
    if rec.error_type:
        meta["error_type"] = rec.error_type
    if rec.flags:
        meta["flags"] = list(rec.flags)
    if output is not None:
        meta["output"] = output
    return ModelCallRecord(
        role=rec.role,
        model=rec.model,
        turn=turn,
        latency_s=rec.latency_s,
        prompt_tokens=rec.input_tokens,
        cached_prompt_tokens=rec.cached_input_tokens,
        completion_tokens=rec.output_tokens,
        retries=rec.retries,
        cost_usd=rec.cost_usd,
        cache_hit=rec.cache_hit,
        template_id=prompt.id if prompt else None,
        template_version=prompt.version if prompt else None,
        error=rec.error,
        metadata=meta,
    )


def _failed(
    exc: ModelCallError,
    state: DialogueState,
    role: str,
    prompt: AnyPrompt | None,
    messages: Sequence[Message],
    turn: int,
) -> tuple[Failure, DialogueState]:
    rec = record_of(exc)
    if rec is None:  # a ChatModel that is not our client: keep what we know
        rec = CallRecord(
            role=role, kind="chat", backend="unknown", model="unknown", started_at="",
            error=exc.line(), error_type=type(exc).__name__,
        )  # fmt: skip
    output = None if exc.output is None else clip(exc.output, OUTPUT_KEPT)
    state = state.with_call(
        call_record(rec, turn=turn, prompt=prompt, messages=messages, output=output)
    )
    return Failure(f"{role} call failed: {exc.line()}", output=output), state


def _prompt_messages(prompt: ChatPrompt) -> list[Message]:
    return as_messages(prompt.messages())


async def _chat(
    model: ChatModel,
    state: DialogueState,
    messages: list[Message],
    prompt: AnyPrompt | None,
    turn: int,
) -> tuple[str | Failure, DialogueState]:
    """One free-text call: the stripped text and the state with the call recorded."""
    try:
        res = await model.chat(messages)
    except ModelCallError as exc:
        return _failed(exc, state, model.role, prompt, messages, turn)
    rec = call_record(res.record, turn=turn, prompt=prompt, messages=messages)
    return res.text.strip(), state.with_call(rec)


class UserAgent:
    """The simulated person: writes the next user line.

    Its prompt style follows its model's endpoint config (compact on the bundled model)."""

    role = "user"

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.style = prompt_style_of(model)

    def prompt(self, view: UserView) -> ChatPrompt:
        """The prompt of this role for ``view`` (what :meth:`act` sends)."""
        return user_prompt(
            view.scenario,
            released_stages=view.released_stages,
            newest_stage=view.newest_stage,
            memories=view.memories,
            newest_memory=view.newest_memory,
            guidance=view.guidance,
            history=view.history,
            surfaced=view.surfaced,
            language=view.language,
            style=self.style,
        )

    async def act(
        self, view: UserView, state: DialogueState
    ) -> tuple[str | Failure, DialogueState]:
        """The next user line from the card, released story, guidance and chat."""
        prompt = self.prompt(view)
        return await _chat(self.model, state, _prompt_messages(prompt), prompt, view.turn)


@dataclass(frozen=True, slots=True)
class TestedReply:
    """The model under test's reply ('' for an empty reply) and why its generation stopped."""

    text: str
    finish_reason: str | None = None


class TestedAgent:
    """The model under test: the next supportive reply, from its system prompt and the chat.

    ``on_empty``: a reply without text (null content, or blank) is an empty reply the judge
    rates ('reply'), or a failed call that ends the dialogue as ``error`` ('error')."""

    role = "tested"

    def __init__(self, model: ChatModel, *, on_empty: Literal["reply", "error"] = "reply") -> None:
        self.model = model
        self.on_empty = on_empty

    async def act(
        self, view: TestedView, state: DialogueState
    ) -> tuple[TestedReply | Failure, DialogueState]:
        """The reply to the conversation in ``view.messages``."""
        msgs = list(view.messages)
        prompt, turn = view.system_prompt, view.turn
        try:
            res = await self.model.chat(msgs, allow_empty=self.on_empty == "reply")
        except ModelCallError as exc:
            return _failed(exc, state, self.model.role, prompt, msgs, turn)
        state = state.with_call(call_record(res.record, turn=turn, prompt=prompt, messages=msgs))
        text = res.text.strip()
        if not text and self.on_empty == "error":
            finish = f" (finish_reason: {res.finish_reason})" if res.finish_reason else ""
            return Failure(f"{self.model.role} call returned no text{finish}"), state
        return TestedReply(text, res.finish_reason), state


def _ratings(form: IEDRForm | MDEPForm) -> Ratings:
    dumped = form.model_dump(by_alias=True)
    return {
        key: IndicatorRating(
            level=int(item["level"]), evidence=item["evidence"], reasoning=item["reasoning"]
        )
        for key, item in dumped.items()
    }


class JudgeAgent:
    """The judge: the IEDR form once, the MDEP form per evaluation window. A sensor only."""

    role = "judge"

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.style = prompt_style_of(model)

    def prompt(self, view: JudgeView) -> ChatPrompt:
        """The prompt of this role for ``view`` (what :meth:`act` sends)."""
        if view.kind == "iedr":
            return judge_iedr_prompt(view.scenario, language=view.language, style=self.style)
        return judge_mdep_prompt(
            view.scenario,
            history=view.history,
            window=view.window,
            k=view.k,
            language=view.language,
            style=self.style,
        )

    async def act(
        self, view: JudgeView, state: DialogueState
    ) -> tuple[Ratings | Failure, DialogueState]:
        """Ratings by indicator key (IEDR or MDEP, per ``view.kind``)."""
        schema: type[IEDRForm] | type[MDEPForm] = IEDRForm if view.kind == "iedr" else MDEPForm
        prompt = self.prompt(view)
        msgs = _prompt_messages(prompt)
        try:
            res = await self.model.structured(msgs, schema)
        except ModelCallError as exc:
            return _failed(exc, state, self.role, prompt, msgs, view.turn)
        rec = call_record(res.record, turn=view.turn, prompt=prompt, messages=msgs, output=res.raw)
        return _ratings(res.value), state.with_call(rec)


@dataclass(frozen=True, slots=True)
class DirectorDecision:
    """The director's chosen action and where it came from."""

    action: ToolAction
    source: Literal["model", "rules"]
    note: str = ""


class DirectorAgent:
    """The director: one action per turn by tool call; rules when absent or when the call
    fails (the failed call stays recorded and the decision notes why rules were used)."""

    role = "director"

    def __init__(self, model: ChatModel | None, *, reveal_every: int = 3) -> None:
        self.model = model
        self.reveal_every = reveal_every
        self.style = prompt_style_of(model)

    def prompt(self, view: DirectorView) -> ChatPrompt:
        """The prompt of this role for ``view`` (what :meth:`act` sends to its model)."""
        return director_prompt(
            view.scenario,
            state=view.packet.render(),
            released_stages=view.released_stages,
            memories=view.memories,
            history=view.history,
            turn=view.turn,
            min_turns=view.min_turns,
            max_turns=view.max_turns,
            language=view.language,
            style=self.style,
        )

    async def act(
        self, view: DirectorView, state: DialogueState
    ) -> tuple[DirectorDecision, DialogueState]:
        """Exactly one action (never a Failure: the rules stand in for a failed call)."""
        if self.model is None:
            return DirectorDecision(rule_action(view, self.reveal_every), "rules"), state
        prompt = self.prompt(view)
        msgs = _prompt_messages(prompt)
        try:
            res = await self.model.tool_call(msgs, DIRECTOR_SPECS)
        except ModelCallError as exc:
            failure, state = _failed(exc, state, self.role, prompt, msgs, view.turn)
            action = rule_action(view, self.reveal_every)
            return DirectorDecision(action, "rules", note=failure.reason), state
        rec = call_record(
            res.record, turn=view.turn, prompt=prompt, messages=msgs,
            output=res.call.raw_arguments,
        )  # fmt: skip
        action = cast(ToolAction, res.call.arguments)  # validated against one of the tools
        return DirectorDecision(action, "model"), state.with_call(rec)
