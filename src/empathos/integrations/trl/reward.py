"""Rewards in TRL's ``reward_funcs`` signature, for plain GRPO on EMPA dialogues.

Both read the keys :mod:`.rollout` adds to each row (TRL hands a rollout function's extra keys
to every reward function as keyword arguments) and return one float per completion, or None
for a dialogue that errored or was never scored: TRL then leaves it out of its group baseline
and gives it advantage 0.

- :func:`empa_reward`: the sum of the dialogue's scored per-turn rewards (with the default
  distance reward and every turn scored, d(P_0) - d(P_T));
- :func:`empa_outcome_reward`: the dialogue's EPM progress d(P_0) - d(P_last scored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from empathos.errors import ConfigError

__all__ = ["empa_outcome_reward", "empa_reward", "turn_sum"]


def _column(kwargs: dict[str, Any], key: str, n: int) -> list[Any]:
    values = kwargs.get(key)
    if not isinstance(values, list) or len(values) != n:
        raise ConfigError(
            f"the rows carry no {key!r} column: the completions did not come from "
            "empathos.integrations.trl.empa_rollout_func",
            field="rollout_func",
        )
    return values


def turn_sum(turn_rewards: Sequence[float | None]) -> float | None:
    """The sum of the scored turns' rewards; None when no turn was scored."""
    scored = [float(r) for r in turn_rewards if r is not None]
    return sum(scored) if scored else None


def _per_dialogue(
    kwargs: dict[str, Any], n: int, key: str, value: Callable[[Any], float | None]
) -> list[float | None]:
    errors = _column(kwargs, "dialogue_error", n)
    return [
        None if err else value(x) for err, x in zip(errors, _column(kwargs, key, n), strict=True)
    ]


def _outcome(value: Any) -> float | None:
    return None if value is None else float(value)


def empa_reward(
    prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
) -> list[float | None]:
    """Per dialogue: the sum of its scored per-turn rewards (None: errored or unscored)."""
    return _per_dialogue(kwargs, len(completions), "turn_rewards", turn_sum)


def empa_outcome_reward(
    prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
) -> list[float | None]:
    """Per dialogue: its EPM progress d(P_0) - d(P_last scored) (None: errored or unscored)."""
    return _per_dialogue(kwargs, len(completions), "outcome", _outcome)
