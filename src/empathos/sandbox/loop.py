"""The turn loop: the environment driven by the model-under-test agent (one code path).

``run_dialogue`` is init (reset), step (until done), check termination (inside each step),
finalise (the record), with cleanup in ``finally``. It never raises for model failures: a
call that still fails after the client's retries ends the dialogue as ``error`` with the
reason; a failed judge evaluation is unscored (too many unscored end it as ``error``).
"""

from __future__ import annotations

from empathos.errors import ConfigError, EmpathosError
from empathos.records import DialogueRecord
from empathos.sandbox.agents import TestedAgent
from empathos.sandbox.config import Roles, SandboxConfig, model_name
from empathos.sandbox.env import EmpathyEnv
from empathos.sandbox.events import DialogueObserver
from empathos.scenarios import Scenario

__all__ = ["run_dialogue"]


async def run_dialogue(
    scenario: Scenario,
    roles: Roles,
    config: SandboxConfig | None = None,
    *,
    seed: int = 0,
    observer: DialogueObserver | None = None,
) -> DialogueRecord:
    """Run one dialogue of ``roles.tested`` on ``scenario`` and return its complete record.

    Raises only :class:`~empathos.errors.ConfigError` (before the dialogue starts: a missing
    role, a bad override, an unreadable system-prompt file); every other expected error ends
    the dialogue as ``error`` in the returned record.
    """
    if roles.tested is None:
        raise ConfigError("run_dialogue needs the model under test", field="roles.tested")
    env = EmpathyEnv(roles, config, model_name=model_name(roles.tested), observer=observer)
    tested = TestedAgent(roles.tested, on_empty=env.config.on_empty)
    started = False
    try:
        await env.reset(scenario, seed)
        started = True
        while not env.done:
            await env.step_agent(tested)
    except ConfigError:
        if not started:
            raise
        env.abort("configuration error during the dialogue")
    except EmpathosError as exc:
        env.abort(f"{type(exc).__name__}: {exc.line()}")
    finally:
        if started and not env.done:  # cancelled or a bug: the observer still hears the end
            env.abort("interrupted")
    return env.record()
