"""The expected errors of empathos, in one hierarchy.

Every error a user can cause (a bad config, a malformed scenario or result file, a model
that keeps answering nonsense, an endpoint that refuses) is an :class:`EmpathosError`. Each
carries *where* (a file, a field) and *what* (the problem), and renders as one line. The CLI
prints that line without a traceback; anything that is not an ``EmpathosError`` is a bug.

Never put a secret (an API key) into an error: errors end up in logs and records.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ConfigError",
    "EmpathosError",
    "InputError",
    "MissingExtraError",
    "ModelCallError",
    "ModelFatalError",
    "ModelOutputError",
    "ModelRateLimitError",
    "ModelTransientError",
    "RecordError",
    "ScenarioError",
]


class EmpathosError(Exception):
    """Base of every expected error: names the place (file, field) and the problem."""

    def __init__(
        self,
        problem: str,
        *,
        file: str | Path | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = str(file) if file is not None else None
        self.field = field
        super().__init__(self.line())

    def line(self) -> str:
        """One line for a person: ``file: field: problem``, omitting what is unknown."""
        parts = [p for p in (self.file, self.field) if p]
        return ": ".join([*parts, self.problem])


class InputError(EmpathosError):
    """A file or value given by the user is unreadable or invalid."""


class ConfigError(InputError):
    """A run configuration (YAML, CLI flag, environment variable) is invalid or incomplete."""


class ScenarioError(InputError):
    """A scenario file is unreadable or invalid."""


class RecordError(InputError):
    """A dialogue record or published result file is unreadable or invalid."""


class MissingExtraError(EmpathosError):
    """An optional dependency is needed; the message gives the install command."""


class ModelCallError(EmpathosError):
    """A call to a language model failed (after any retries the policy allowed)."""

    def __init__(
        self,
        problem: str,
        *,
        role: str | None = None,
        endpoint: str | None = None,
        attempts: int = 1,
    ) -> None:
        self.role = role
        self.endpoint = endpoint
        self.attempts = attempts
        #: The failed call's record (an ``empathos.llm.CallRecord``), set by the model client.
        self.record: object | None = None
        #: The model's last reply when it could not be used (invalid output), set by the
        #: model client: what a user needs to see why a judge never answered validly.
        self.output: str | None = None
        where = " ".join(x for x in (f"role={role}" if role else "", endpoint or "") if x)
        super().__init__(problem, field=where or None)


class ModelRateLimitError(ModelCallError):
    """The endpoint kept answering 429 (rate limit) until the retries ran out."""


class ModelTransientError(ModelCallError):
    """A server error, timeout or dropped connection outlasted the retries."""


class ModelFatalError(ModelCallError):
    """An error no retry can fix: authentication, unknown model, bad request."""


class ModelOutputError(ModelCallError):
    """The model's output could not be parsed or validated, even after repair and re-asks."""
