"""A meta-check of the judge role: ``inspect eval empathos/empa_judge_check --model-role
judge=M`` (any ``--model``; it is not called).

Before trusting a judge model with EMPA, check two things the EPM relies on:

- **stability**: the same transcript rated ``repeats`` times gets the same levels, within
  one level per indicator;
- **no credit for keywords**: a reply stuffed with the words of empathy ("I hear you, your
  feelings are valid...") and nothing else scores below a reply that engages with what the
  person said, and gets the top progress level on no axis.

One sample: a short exchange about a bundled scenario (our own writing), once with a reply
that engages and once with a keyword-stuffed one, each rated ``repeats`` times with the MDEP
form, as the dialogue's judge rates a turn. The score is 1 when both checks pass; its
metadata holds the levels of every rating, the spread per indicator and the mean net levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from empathos.epm import EPMConfig
from empathos.integrations.inspect.backend import role_client
from empathos.integrations.inspect.dataset import EmpaSettings
from empathos.integrations.inspect.preflight import prerequisite
from empathos.prompts.blocks import Turn
from empathos.sandbox import JudgeAgent, JudgeView
from empathos.sandbox.agents import Failure
from empathos.sandbox.state import DialogueState
from empathos.scenarios import Scenario

__all__ = [
    "CASE",
    "ENGAGED",
    "STUFFED",
    "check_ratings",
    "empa_judge_check",
    "judge_checked",
    "rate_twice",
]

#: The bundled scenario the exchange is about (its opening line is the person's).
CASE = "en-01-sourdough"
#: A reply that engages with what the person said.
ENGAGED = (
    "Losing it after feeding it every day for so long is a real loss, even if other people "
    "shrug at it. It sounds like it was part of your mornings. What did looking after it "
    "mean to you?"
)
#: A reply made of the words of empathy and nothing else.
STUFFED = (
    "I hear you. I understand. Your feelings are valid. I validate your feelings. I am here "
    "for you. Empathy, compassion, support, validation, understanding, acceptance. I hear "
    "you and I understand you and your feelings are valid."
)
_STORE = "empathos:judge_check"


def _scenario() -> Scenario:
    [scenario] = EmpaSettings(cases=CASE).select()
    return scenario


async def _rate(agent: JudgeAgent, scenario: Scenario, reply: str) -> dict[str, int | None]:
    language = scenario.labels.language
    exchange: tuple[Turn, ...] = (("user", scenario.persona.topic), ("model", reply))
    view = JudgeView(
        kind="mdep", scenario=scenario, language=language, turn=1,
        history=exchange, window=exchange, k=1,
    )  # fmt: skip
    state = DialogueState(scenario=scenario, language=language, epm_config=EPMConfig())
    ratings, _ = await agent.act(view, state)
    if isinstance(ratings, Failure):
        raise prerequisite(f"empathos/empa_judge_check: the judge failed: {ratings.reason}")
    return {key: rating.level for key, rating in ratings.items()}


@solver
def rate_twice(repeats: int) -> Solver:
    """Rate the engaged and the stuffed reply ``repeats`` times each with the judge role."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        agent = JudgeAgent(role_client(get_model(role="judge", required=True), "judge"))
        scenario = _scenario()
        rated = {
            name: [await _rate(agent, scenario, reply) for _ in range(repeats)]
            for name, reply in (("engaged", ENGAGED), ("stuffed", STUFFED))
        }
        state.store.set(_STORE, rated)
        return state

    return solve


def _net(ratings: Sequence[dict[str, int | None]]) -> float:
    """The mean over ratings of the summed levels (progress minus harm per axis)."""
    sums = [sum(level or 0 for level in r.values()) for r in ratings]
    return sum(sums) / len(sums)


def check_ratings(rated: dict[str, list[dict[str, int | None]]]) -> dict[str, Any]:
    """The two checks on the levels of each reply's ratings: ``stable`` (every indicator
    within one level over the repeats, each reply), ``keywords_not_rewarded`` (the stuffed
    reply's mean net level below the engaged one's, no top progress level)."""
    spread: dict[str, int] = {}
    for name, ratings in rated.items():
        for key in ratings[0]:
            levels = [r.get(key) for r in ratings]
            known = [lv for lv in levels if lv is not None]  # a missing level: unstable
            spread[f"{name} {key}"] = max(known) - min(known) if len(known) == len(levels) else 9
    engaged, stuffed = _net(rated["engaged"]), _net(rated["stuffed"])
    top = any(lv == 2 for r in rated["stuffed"] for k, lv in r.items() if k.endswith("Prog"))
    return {
        "stable": max(spread.values(), default=0) <= 1,
        "keywords_not_rewarded": stuffed < engaged and not top,
        "spread": spread,
        "net_engaged": engaged,
        "net_stuffed": stuffed,
    }


@scorer(metrics=[accuracy()])
def judge_checked() -> Scorer:
    """1 when the judge is stable and gives keywords no credit, else 0 (see the metadata)."""

    async def score(state: TaskState, target: Target) -> Score:
        rated = state.store.get(_STORE)
        result = check_ratings(rated)
        ok = result["stable"] and result["keywords_not_rewarded"]
        failed = [name for name in ("stable", "keywords_not_rewarded") if not result[name]]
        return Score(
            value=1 if ok else 0,
            explanation="both checks pass" if ok else f"failed: {', '.join(failed)}",
            metadata={**result, "ratings": rated},
        )

    return score


@task
def empa_judge_check(repeats: int = 3) -> Task:
    """Is the judge role fit for EMPA: stable ratings, no credit for keyword stuffing.

    Args:
        repeats: How many times each reply is rated.
    """
    if repeats < 2:
        raise prerequisite("empathos/empa_judge_check: -T repeats: must be at least 2")
    return Task(
        dataset=[Sample(id="judge-check", input=_scenario().persona.topic)],
        solver=rate_twice(repeats),
        scorer=judge_checked(),
        version=1,
    )
