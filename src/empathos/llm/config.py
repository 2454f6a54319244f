"""Per-role endpoint configuration: where a role's model lives and how to call it.

The API key itself is never stored: :attr:`EndpointConfig.api_key_env` names the environment
variable that holds it, read only when the client is built. A ``base_url`` is checked when the
config is built: http or https, a host, a valid port, and no ``user:password@`` (which would
be sent as Basic auth instead of the key); a query string (``?api-version=...``) is kept and
sent with every request.
"""

from __future__ import annotations

import os
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from empathos.errors import ConfigError

# The id of the bundled offline model (empathos.llm.offline.OFFLINE_MODEL_ID; repeated here so
# the config does not import the model code; a test checks they agree).
_OFFLINE_MODEL_ID = "smollm2-135m-instruct"

__all__ = [
    "EndpointConfig",
    "ModelPrice",
    "PromptStyleName",
    "RetryConfig",
    "StructuredConfig",
    "check_base_url",
    "local_model_id",
    "prompt_style_of",
    "redact_url",
    "resolve_api_key",
]

PromptStyleName = Literal["full", "compact"]
_OFFLINE_ONLY = ("repetition_penalty", "no_repeat_ngram")


def local_model_id(path: object) -> str:
    """The name a local policy runs (and is scored) under: a checkpoint of ``empathos train``
    (``<run>/checkpoints/step-000100``, or its ``adapter`` folder) is ``<run>-step-000100``,
    never "adapter"; another ``.../adapter`` folder is named by the folder holding it; any
    other directory is its own name."""
    parts = [x for x in str(path or "").replace("\\", "/").split("/") if x not in ("", ".")]
    if len(parts) > 1 and parts[-1] == "adapter":  # named by the folder that holds it
        parts = parts[:-1]
    if len(parts) >= 2 and parts[-2] == "checkpoints" and parts[-1].startswith("step-"):
        run = parts[-3] if len(parts) >= 3 else "train"
        return f"{run}-{parts[-1]}"
    return parts[-1] if parts else "local-policy"


class RetryConfig(BaseModel):
    """A bounded retry policy: exponential backoff with jitter, honouring Retry-After."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_attempts: int = Field(
        4, ge=1, le=20, description="Total attempts per call, the first one included."
    )
    backoff_base_s: float = Field(
        0.5, ge=0.0, description="Wait before the 2nd attempt; doubles after each failure."
    )
    backoff_max_s: float = Field(30.0, ge=0.0, description="Upper bound of one wait, in seconds.")
    jitter_s: float = Field(
        0.25, ge=0.0, description="Uniform random extra wait in [0, jitter_s] added to each wait."
    )
    retry_after_max_s: float = Field(
        60.0, ge=0.0, description="Largest Retry-After (seconds) honoured; longer ones are capped."
    )


class StructuredConfig(BaseModel):
    """How structured output (a pydantic model, a tool call) is asked for and checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    json_schema: Literal["on", "off", "auto"] = Field(
        "auto",
        description=(
            "Send response_format=json_schema. 'auto' tries it and falls back to JSON mode, "
            "then to a plain prompt, when the endpoint rejects it."
        ),
    )
    json_mode: bool = Field(
        True, description="Use response_format=json_object when the JSON schema is not sent."
    )
    max_reasks: int = Field(
        2, ge=0, le=10, description="Re-asks with the validation error before the call fails."
    )
    tool_choice: Literal["required", "auto"] = Field(
        "required", description="tool_choice sent with tool calls."
    )


class ModelPrice(BaseModel):
    """What a model's tokens cost, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    input: float = Field(ge=0.0, description="USD per million prompt tokens (not cached).")
    cached_input: float | None = Field(
        None,
        ge=0.0,
        description="USD per million prompt tokens the server served from its prefix cache "
        "(as its usage reports them); None: the input price.",
    )
    output: float = Field(ge=0.0, description="USD per million completion tokens.")

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """The cost of one call: uncached and cached prompt tokens, completion tokens."""
        cached = min(cached_tokens, input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (input_tokens - cached) * self.input
            + cached * cached_price
            + output_tokens * self.output
        ) / 1e6


def check_base_url(url: str) -> None:
    """Raise ValueError (never quoting the URL, which may hold a secret) unless ``url`` is an
    http(s) URL with a host, a valid port and no credentials."""
    if any(ch.isspace() for ch in url):
        raise ValueError("base_url holds whitespace")
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port that is not a number in 0-65535
    except ValueError:
        raise ValueError("base_url is not a valid URL (check the host and port)") from None
    if parts.scheme not in ("http", "https"):
        shown = f"'{parts.scheme}'" if parts.scheme else "none"
        raise ValueError(f"base_url must start with http:// or https:// (scheme: {shown})")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "base_url holds credentials (user:password@): they would go out as Basic auth, "
            "not as the API key; put the key in an environment variable and name that "
            "variable in api_key_env"
        )
    if not parts.hostname:
        raise ValueError("base_url has no host (expected e.g. http://127.0.0.1:8000/v1)")
    if parts.fragment:
        raise ValueError("base_url has a #fragment, which is never sent to a server")
    del port


class EndpointConfig(BaseModel):
    """One role's model endpoint: backend kind, address, sampling, limits, prices, cache."""

    # hide_input_in_errors: a rejected base_url may hold a password; errors never quote it.
    model_config = ConfigDict(
        extra="forbid", frozen=True, hide_input_in_errors=True, allow_inf_nan=False
    )

    kind: Literal["openai", "offline", "scripted", "local"] = Field(
        "openai",
        description="Backend: an OpenAI-compatible HTTP endpoint, the bundled offline "
        "model, a scripted (rule-based) backend for tests, or a local Hugging Face causal LM "
        "in-process (model under test only; see path and adapter).",
    )
    path: str | None = Field(
        None,
        description="kind 'local' only: directory of a Hugging Face causal LM (or of a saved "
        "LoRA adapter); None: the bundled SmolLM2-135M.",
    )
    adapter: str | None = Field(
        None, description="kind 'local' only: directory of a LoRA adapter to apply."
    )
    name: str | None = Field(
        None,
        description="Name of the concurrency limit; endpoints with the same name share it. "
        "Defaults to base_url + model.",
    )
    base_url: str | None = Field(
        None, description="Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1."
    )
    model: str = Field(
        "",
        description="Model id sent to the endpoint; required when kind is 'openai'. Left "
        "out: the bundled model's id for 'offline', 'scripted' for 'scripted'.",
    )
    api_key_env: str | None = Field(
        None,
        description="NAME of the environment variable holding the API key (never the key). "
        "None: no key (local servers).",
    )
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float | None = Field(None, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int | None = Field(None, ge=1, description="Cap on generated tokens per call.")
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="Presence penalty.")
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="Frequency penalty.")
    seed: int | None = Field(None, description="Sampling seed, where the endpoint supports it.")
    repetition_penalty: float | None = Field(
        None,
        ge=1.0,
        le=2.0,
        description="kind 'offline' only: divides the scores of tokens already in the prompt "
        "or the reply (1.0: off). None: the offline default for free text (1.15).",
    )
    no_repeat_ngram: int | None = Field(
        None,
        ge=0,
        le=16,
        description="kind 'offline' only: no n-gram of this size appears twice in a free-text "
        "reply (0: off). None: the offline default (3).",
    )
    prompt_style: Literal["auto", "full", "compact"] = Field(
        "auto",
        description="Prompt templates of this role: 'full', 'compact' (a few sentences, for "
        "small local models) or 'auto' (compact on the bundled offline model, else full).",
    )
    timeout_s: float = Field(
        60.0,
        gt=0.0,
        description="Silence timeout of one HTTP attempt, seconds: connecting, and each wait "
        "for the server's next bytes.",
    )
    deadline_s: float = Field(
        600.0,
        gt=0.0,
        description="Deadline of one HTTP attempt as a whole (connecting, sending, reading "
        "the whole reply), seconds.",
    )
    max_concurrency: int = Field(
        16, ge=1, le=4096, description="Calls in flight at once on this endpoint (named limit)."
    )
    retry: RetryConfig = Field(default_factory=RetryConfig, description="Retry policy.")
    structured: StructuredConfig = Field(
        default_factory=StructuredConfig, description="Structured output and tool call options."
    )
    price_input_per_1k: float | None = Field(
        None, ge=0.0, description="Price (USD) per 1000 input tokens; None: cost not computed."
    )
    price_output_per_1k: float | None = Field(
        None, ge=0.0, description="Price (USD) per 1000 output tokens; None: cost not computed."
    )
    price: ModelPrice | None = Field(
        None,
        description="USD per million input, cached input and output tokens (a run config's "
        "price table sets it from the model id); it wins over the per-1k prices. None and "
        "no per-1k price: cost not computed.",
    )
    cache: bool = Field(False, description="Use the response cache for this role (opt-in).")

    @field_validator("base_url")
    @classmethod
    def _valid_url(cls, value: str | None) -> str | None:
        if value:
            check_base_url(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _default_model(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("model"):
            return data
        kind = data.get("kind", "openai")
        if kind == "openai":
            raise ValueError(
                "model is required when kind is 'openai' (the model id at the endpoint, "
                "as its /v1/models lists it)"
            )
        return {**data, "model": cls._default_model_id(kind, data)}

    @classmethod
    def _default_model_id(cls, kind: str, data: dict[str, Any]) -> str:
        """The recorded model id of an endpoint given without one."""
        if kind == "local":
            return local_model_id(data.get("adapter") or data.get("path"))
        return _OFFLINE_MODEL_ID if kind == "offline" else "scripted"

    @model_validator(mode="after")
    def _needs_url(self) -> EndpointConfig:
        if self.kind == "openai" and not self.base_url:
            raise ValueError("base_url is required when kind is 'openai'")
        if self.kind != "local" and (self.path is not None or self.adapter is not None):
            raise ValueError("path and adapter are only used with kind 'local'")
        for name in _OFFLINE_ONLY:
            if self.kind == "openai" and getattr(self, name) is not None:
                raise ValueError(f"{name} is only used by kind 'offline' (the bundled model)")
        return self

    def resolved_prompt_style(self) -> PromptStyleName:
        """The prompt style this endpoint's role uses ('auto' resolved)."""
        if self.prompt_style == "auto":
            return "compact" if self.kind == "offline" else "full"
        return self.prompt_style

    def limit_name(self) -> str:
        """The name of this endpoint's concurrency limit."""
        return self.name or f"{self.kind}:{self.base_url or ''}:{self.model}"

    def sampling(self) -> dict[str, float | int]:
        """The sampling parameters that are set, as request fields."""
        fields = (
            "temperature",
            "top_p",
            "max_tokens",
            "presence_penalty",
            "frequency_penalty",
            "seed",
            *_OFFLINE_ONLY,
        )
        out: dict[str, float | int] = {}
        for name in fields:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


def resolve_api_key(config: EndpointConfig, role: str) -> str | None:
    """Read the key from the environment variable the config names; fail clearly if unset."""
    if config.api_key_env is None:
        return None
    value = os.environ.get(config.api_key_env)
    if not value:
        raise ConfigError(
            f"environment variable {config.api_key_env} (the API key) is not set",
            field=f"roles.{role}.api_key_env",
        )
    if any(ch in value for ch in "\r\n\0"):  # it would end the Authorization header early
        raise ConfigError(
            f"environment variable {config.api_key_env} (the API key) holds a line break or "
            "a NUL character (pasted with its newline?)",
            field=f"roles.{role}.api_key_env",
        )
    return value


def redact_url(url: str | None) -> str | None:
    """``url`` without user:password and query string (where keys sometimes hide)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal (its zone, if any, still %-encoded)
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def prompt_style_of(model: object) -> PromptStyleName:
    """The prompt style of a role's model: its endpoint config's, else 'full' (a ChatModel
    without an :class:`EndpointConfig`, such as a test double, gets the full prompts)."""
    config = getattr(model, "config", None)
    return config.resolved_prompt_style() if isinstance(config, EndpointConfig) else "full"
