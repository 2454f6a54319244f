"""The frozen state of one dialogue, the EPM state packet, and each role's view of the state.

:class:`DialogueState` is immutable: every change returns a new state (``dataclasses.replace``).
Each role gets a *view* built here from the state, holding exactly what that role may see; the
agents render their prompts from the view alone. Pure: no I/O, no clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict, Field

from empathos.epm import EPMConfig, EPMState, Termination, thresholds_of, victory_checklist
from empathos.llm import Message
from empathos.prompts.blocks import Surfaced
from empathos.prompts.blocks import Turn as BlockTurn
from empathos.prompts.render import RenderedPrompt
from empathos.records import DirectorAction, Evaluation, InitialDeficit, ModelCallRecord, Turn
from empathos.scenarios import Scenario

__all__ = [
    "EMPTY_REPLY_TEXT",
    "DialogueState",
    "DirectorView",
    "JudgeView",
    "StatePacket",
    "TestedView",
    "UserView",
    "director_view",
    "judge_view",
    "reply_text",
    "state_packet",
    "tested_view",
    "user_view",
]


@dataclass(frozen=True, slots=True)
class DialogueState:
    """Everything known about one dialogue at one moment. Never mutated."""

    scenario: Scenario
    language: str
    epm_config: EPMConfig
    turn: int = 0
    turns: tuple[Turn, ...] = ()
    epm: EPMState | None = None
    iedr: InitialDeficit | None = None
    evaluations: tuple[Evaluation, ...] = ()
    director: tuple[DirectorAction, ...] = ()
    calls: tuple[ModelCallRecord, ...] = ()
    released_stages: tuple[int, ...] = ()
    newest_stage: int | None = None
    memories: tuple[str, ...] = ()
    newest_memory: str | None = None
    surfaced: tuple[Surfaced, ...] = ()
    guidance: str | None = None
    termination: Termination | None = None

    def with_call(self, call: ModelCallRecord) -> DialogueState:
        """The state with one more model call recorded."""
        return replace(self, calls=(*self.calls, call))

    def with_user_line(self, text: str) -> DialogueState:
        """Start the next turn with the user's line."""
        t = self.turn + 1
        return replace(self, turn=t, turns=(*self.turns, Turn(index=t, user=text)))

    def with_reply(self, text: str, *, finish_reason: str | None = None) -> DialogueState:
        """Complete the current turn with the tested model's reply; a blank one is recorded
        as an empty reply (``empty_reply``), which the judge rates like any other."""
        if not self.turns or self.turns[-1].assistant or self.turns[-1].empty_reply:
            raise ValueError("no open turn to reply to")
        update = {
            "assistant": text,
            "finish_reason": finish_reason,
            "empty_reply": not text.strip(),
        }
        last = self.turns[-1].model_copy(update=update)
        return replace(self, turns=(*self.turns[:-1], last))

    def ended(self, termination: Termination) -> DialogueState:
        """The state with the dialogue's termination set."""
        return replace(self, termination=termination)

    def history(self) -> list[BlockTurn]:
        """The conversation as (speaker, text) pairs, a reply left out while the turn is open;
        an empty reply shows as :func:`reply_text` marks it."""
        out: list[BlockTurn] = []
        for turn in self.turns:
            out.append(("user", turn.user))
            if turn.assistant or turn.empty_reply:
                out.append(("model", reply_text(turn, self.language)))
        return out


# What the other roles see of an empty reply: the model said nothing (not an omission of ours).
EMPTY_REPLY_TEXT = {
    "en": "[no reply: the model returned no text]",
    "zh": "[没有回复：模型没有返回任何文字]",
}


def reply_text(turn: Turn, language: str) -> str:
    """The tested model's reply as the other roles see it (empty replies marked)."""
    if turn.empty_reply:
        return EMPTY_REPLY_TEXT.get(language, EMPTY_REPLY_TEXT["en"])
    return turn.assistant


class StatePacket(BaseModel):
    """What the director is told about the measured state (SANDBOX_SPEC section 2)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int = Field(description="Current turn.")
    eval_turn: int = Field(description="Turn of the latest evaluation (0: none yet).")
    P0: tuple[float, ...] = Field(description="Initial deficit P_0.")
    P: tuple[float, ...] = Field(description="Current state P_t.")
    v: tuple[float, ...] | None = Field(description="Latest action vector (None: unscored).")
    p_norm: float = Field(description="||P_t||.")
    distance: float = Field(description="Half-space distance d(P_t).")
    projection: float = Field(description="P_t . v*_0.")
    eps_dist: float = Field(description="Distance threshold epsilon_dist.")
    eps_dir: float = Field(description="Direction threshold epsilon_dir.")
    eps_energy: float = Field(description="Energy threshold epsilon_energy.")
    E_total: float = Field(description="Cumulative energy.")
    alignment: float | None = Field(description="Latest alignment (None: unscored).")
    delta_E: float | None = Field(description="Latest energy increment (None: unscored).")
    success_rule: str = Field(
        default="reference", description="The active preset's success rule the checklist uses."
    )
    mean_alignment: float = Field(
        default=0.0, description="Mean alignment of the scored evaluations (paper rule)."
    )
    tau_align: float = Field(default=0.7, description="Alignment threshold of the paper rule.")
    min_turns_reached: bool = Field(description="Victory checklist: t >= min_turns.")
    energy_ok: bool = Field(
        description="Victory checklist: E_total (rounded as the rule rounds it) >= epsilon_energy "
        "(reference) or > epsilon_energy (paper)."
    )
    near_origin: bool = Field(
        description="Victory checklist: ||P_t|| <= epsilon_dist (reference) or < (paper)."
    )
    direction_ok: bool = Field(
        description="Victory checklist, second condition: projection >= -epsilon_dir "
        "(reference) or mean alignment > tau_align (paper)."
    )
    in_zone: bool = Field(
        description="Victory checklist: the in-zone rule holds (every axis >= -1 and "
        "E_total >= epsilon_energy; False when the preset's in-zone rule is off)."
    )
    negative_streak: int = Field(description="Failure flag: trailing evaluations with dE < 0.")
    n_unscored: int = Field(description="Failure flag: unscored evaluations so far.")

    def render(self) -> str:
        """The packet as compact text for the director's prompt: every quantity once, in
        numbers, not prose (the turn itself is on the prompt's turn line; trailing zeros of a
        number are left out)."""

        def vec(x: tuple[float, ...] | None) -> str:
            return "unscored" if x is None else ",".join(_num(a, 1) for a in x)

        def num(x: float | None) -> str:
            return "unscored" if x is None else _num(x, 2)

        second = (
            f"projection {num(self.projection)} (needs >= {num(-self.eps_dir)})"
            if self.success_rule == "reference"
            else f"mean alignment {num(self.mean_alignment)} (needs > {num(self.tau_align)})"
        )
        return "\n".join(
            [
                f"latest evaluation: turn {self.eval_turn}; (C,A,P) P_0 {vec(self.P0)}; "
                f"P_t {vec(self.P)}; v_t {vec(self.v)}",
                f"||P_t|| {num(self.p_norm)} (eps_dist {num(self.eps_dist)}); half-space "
                f"distance {num(self.distance)}; {second}",
                f"E_total {num(self.E_total)} (eps_energy {num(self.eps_energy)}); last "
                f"delta_E {num(self.delta_E)}, alignment {num(self.alignment)}",
                "victory checklist: "
                f"min_turns {_yn(self.min_turns_reached)}, energy {_yn(self.energy_ok)}, "
                f"near origin {_yn(self.near_origin)}, direction {_yn(self.direction_ok)}, "
                f"in zone {_yn(self.in_zone)}",
                f"failure flags: {self.negative_streak} negative steps in a row, "
                f"{self.n_unscored} unscored",
            ]
        )


def _num(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals, without trailing zeros ("-14", "2.9", "0")."""
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _yn(flag: bool) -> str:
    return "yes" if flag else "no"


def state_packet(state: DialogueState) -> StatePacket:
    """The director's packet from the dialogue state (requires the EPM state)."""
    if state.epm is None:
        raise ValueError("the EPM state is not initialised")
    cfg, epm = state.epm_config, state.epm
    last = epm.last
    th = thresholds_of(epm, cfg)
    # The same comparisons, rounding and preset as the termination rule (epm.victory).
    check = victory_checklist(epm, cfg)
    aligns = [p.alignment or 0.0 for p in epm.points[1:] if p.scored]
    eps_dist, eps_dir, eps_energy = (
        float(th.eps_dist[0]),
        float(th.eps_dir[0]),
        float(th.eps_energy[0]),
    )
    streak = 0
    for point in reversed([p for p in epm.points[1:] if p.scored]):
        if point.delta_E is None or point.delta_E >= 0:
            break
        streak += 1
    return StatePacket(
        turn=state.turn,
        eval_turn=epm.turn,
        P0=epm.P0,
        P=last.P,
        v=last.v,
        p_norm=last.p_norm,
        distance=last.distance,
        projection=last.projection,
        eps_dist=eps_dist,
        eps_dir=eps_dir,
        eps_energy=eps_energy,
        E_total=last.E_total,
        alignment=last.alignment,
        delta_E=last.delta_E,
        success_rule=cfg.success_rule,
        mean_alignment=sum(aligns) / len(aligns) if aligns else 0.0,
        tau_align=cfg.tau_align,
        min_turns_reached=state.turn >= cfg.min_turns,
        energy_ok=bool(check.energy[0]),
        near_origin=bool(check.near[0]),
        direction_ok=bool(check.second[0]),
        in_zone=bool(check.zone[0]),
        negative_streak=streak,
        n_unscored=epm.n_unscored,
    )


@dataclass(frozen=True, slots=True)
class UserView:
    """What the user agent sees: its card, released stages and memories (and when each
    surfaced), the latest guidance, and the conversation (its own lines as "me")."""

    scenario: Scenario
    language: str
    turn: int
    released_stages: tuple[int, ...]
    newest_stage: int | None
    memories: tuple[str, ...]
    newest_memory: str | None
    guidance: str | None
    history: tuple[BlockTurn, ...]
    surfaced: tuple[Surfaced, ...] = ()


@dataclass(frozen=True, slots=True)
class TestedView:
    """What the model under test sees: its system prompt (if any) and the conversation."""

    turn: int
    system_prompt: RenderedPrompt | None
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class JudgeView:
    """What the judge sees: the scenario (for the condensed profile, or the whole card and
    story for the IEDR), the whole history and the window of the last K turns it rates."""

    kind: str  # "iedr" or "mdep"
    scenario: Scenario
    language: str
    turn: int
    history: tuple[BlockTurn, ...]
    window: tuple[BlockTurn, ...]
    k: int


@dataclass(frozen=True, slots=True)
class DirectorView:
    """What the director sees: the state packet, history, released stages and memories, and
    (through the scenario) the story and the persona's priorities."""

    scenario: Scenario
    language: str
    turn: int
    packet: StatePacket
    released_stages: tuple[int, ...]
    memories: tuple[str, ...]
    history: tuple[BlockTurn, ...]
    min_turns: int
    max_turns: int


def user_view(state: DialogueState) -> UserView:
    """The user agent's view of the state."""
    return UserView(
        scenario=state.scenario,
        language=state.language,
        turn=state.turn + 1,
        released_stages=state.released_stages,
        newest_stage=state.newest_stage,
        memories=state.memories,
        newest_memory=state.newest_memory,
        guidance=state.guidance,
        history=tuple(state.history()),
        surfaced=state.surfaced,
    )


def tested_view(state: DialogueState, system_prompt: RenderedPrompt | None) -> TestedView:
    """The model under test's view: system prompt + the chat, the person as 'user'."""
    msgs: list[Message] = []
    if system_prompt is not None:
        msgs.append(Message(role="system", content=system_prompt.text))
    for speaker, text in state.history():
        msgs.append(Message(role="user" if speaker == "user" else "assistant", content=text))
    return TestedView(turn=state.turn, system_prompt=system_prompt, messages=tuple(msgs))


def judge_view(state: DialogueState, kind: str, *, since: int | None = None) -> JudgeView:
    """The judge's view; for MDEP the window holds the turns after turn ``since``."""
    history = tuple(state.history())
    window: list[BlockTurn] = []
    k = 0
    if kind == "mdep":
        start = since if since is not None else state.turn - 1
        rated = [t for t in state.turns if t.index > start]
        k = len(rated)
        for t in rated:
            window += [("user", t.user), ("model", reply_text(t, state.language))]
    return JudgeView(
        kind=kind,
        scenario=state.scenario,
        language=state.language,
        turn=state.turn,
        history=history,
        window=tuple(window),
        k=k,
    )


def director_view(state: DialogueState) -> DirectorView:
    """The director's view of the state."""
    return DirectorView(
        scenario=state.scenario,
        language=state.language,
        turn=state.turn,
        packet=state_packet(state),
        released_stages=state.released_stages,
        memories=state.memories,
        history=tuple(state.history()),
        min_turns=state.epm_config.min_turns,
        max_turns=state.epm_config.max_turns,
    )
