"""The ``empa-release`` protocol: the published EMPA release's own loop under our runner.

The release (the package ``empa``, installed by the user from their own copy under its own
licence; never shipped or copied here) brings the prompts, the agents and the dialogue loop.
empathos brings the rest: each agent's ``LLMClient`` is a bridge to empathos's model client
of that role (endpoint per role, retries, cache, limits, token and cost accounting), and the
runner gives concurrency, atomic records, resume, progress and the leaderboard.

- :func:`load_release` imports ``empa`` (only when this protocol is chosen) and checks the API.
- :func:`select_cases` resolves ``--cases official|all|ids`` through the release's loader.
- :func:`release_dialogue` is the runner's dialogue function: the release's synchronous
  ``run_chat_loop`` runs in a worker thread per dialogue; the bridge calls back into the event
  loop; what the release prints goes to ``<out>/logs/<case>__t<k>.log``; the returned result
  (the published format) is stored as it is, plus an ``empathos`` object (protocol, release
  version, scenario hash, model calls).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from empathos.errors import ConfigError, EmpathosError, ModelCallError, RecordError
from empathos.llm import CallRecord, Message, ModelClient, RawReply, ToolDef, record_of
from empathos.llm.client import SAMPLING_KEYS
from empathos.llm.structured import OutputInvalid, parse_json
from empathos.records.io import record_from_data
from empathos.records.model import ModelCallRecord
from empathos.run.config import RunConfig
from empathos.run.manifest import PromptInfo, ScenarioInfo, fingerprint_parts
from empathos.run.protocols.thread_logs import ThreadLogRouter
from empathos.run.runner import DialogueFn, Job, StoredRecord
from empathos.sandbox.config import Roles

__all__ = [
    "INSTALL_HINT",
    "LOGS_DIR",
    "PROTOCOL",
    "RELEASE_PENALTY",
    "Release",
    "ReleaseCase",
    "bridge_client",
    "fingerprint",
    "load_release",
    "manifest_parts",
    "release_dialogue",
    "select_cases",
    "system_prompt_version",
]

PROTOCOL = "empa-release"
LOGS_DIR = "logs"
#: The release's own client sends these on every call; a role's config may override them.
RELEASE_PENALTY = 0.7
INSTALL_HINT = (
    "install your copy of the EMPA release with: pip install -e PATH "
    "(PATH: the release's checkout, the folder with its pyproject.toml or setup.py)"
)
_API: dict[str, tuple[str, ...]] = {
    "empa.llm.base": ("LLMClient", "Message", "ToolCall", "LLMResponse"),
    "empa.agents": ("Actor", "Judger", "Director", "TestModel"),
    "empa.rubric.empathy_v2.config": ("EmpathyRubricV2",),
    "empa.data.loader": ("load_config", "load_official_cases"),
    "empa.orchestrator.chat_loop": ("run_chat_loop",),
}
_MESSAGE_ROLES = {"system", "user", "assistant", "tool"}


class _Cancelled(BaseException):
    """Raised inside the release's thread when its dialogue was cancelled (Ctrl-C).

    A BaseException, so a release that catches ``Exception`` around a call still stops."""


# -- the package ------------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """The imported release: its modules, version and where it is installed."""

    modules: Mapping[str, ModuleType]
    version: str
    location: str

    def attr(self, module: str, name: str) -> Any:
        """``name`` of the release's module ``module`` (a name of the public API)."""
        return getattr(self.modules[module], name)


def _version(package: ModuleType) -> str:
    found = getattr(package, "__version__", None)
    if isinstance(found, str) and found:
        return found
    for dist in metadata.packages_distributions().get("empa", []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def load_release() -> Release:
    """Import the user's ``empa`` and check it has the API this protocol drives.

    Missing or incompatible: one ConfigError saying how to install it."""
    modules: dict[str, ModuleType] = {}
    try:
        package = importlib.import_module("empa")
        for name in _API:
            modules[name] = importlib.import_module(name)
    except ImportError as exc:
        if exc.name == "empa":
            what = "is not installed"
        elif (exc.name or "").startswith("empa.") and "empa" in sys.modules:
            what = f"installed is not a compatible EMPA release ({exc})"
        else:
            what = f"cannot be imported ({exc})"
        raise ConfigError(
            f"the package 'empa' (the EMPA release) {what}; {INSTALL_HINT}", field="--protocol"
        ) from None
    location = str(Path(package.__file__ or ".").resolve().parent)
    missing = [f"{m}.{n}" for m, names in _API.items() for n in names if not hasattr(modules[m], n)]
    if missing:
        raise ConfigError(
            f"the 'empa' package at {location} is not a compatible EMPA release (missing: "
            f"{', '.join(missing)}); {INSTALL_HINT}",
            field="--protocol",
        )
    return Release(modules=modules, version=_version(package), location=location)


# -- cases ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReleaseCase:
    """One case as the release's loader returns it (``scenario`` and ``actor_prompt``)."""

    id: str
    digest: str
    config: Mapping[str, Any] = field(compare=False, repr=False)

    def scenario_hash(self) -> str:
        """sha256 of the loaded case (a changed case is not resumed)."""
        return self.digest


def _all_ids(release: Release) -> list[str]:
    """Every case id of the release's data folder (``cases/<id>.md`` under ``empa/data``).

    The API has no listing function: this reads the published layout's file names."""
    data_dir = Path(release.modules["empa.data.loader"].__file__ or ".").resolve().parent
    ids = sorted({p.stem for p in data_dir.glob("**/cases/*.md")})
    if not ids:
        raise ConfigError(
            f"cannot list the release's cases (no cases/*.md under {data_dir}); give "
            "--cases official or case ids",
            field="--cases",
        )
    return ids


def select_cases(config: RunConfig, release: Release) -> list[ReleaseCase]:
    """``--cases`` (default: official) through the release's own loader; ours are refused."""
    if config.scenarios != "builtin":
        raise ConfigError(
            "the empa-release protocol runs the release's own cases (from its data folder), "
            "not scenario files; drop --scenarios and choose with --cases official|all|ids",
            field="--scenarios",
        )
    if config.language is not None:
        raise ConfigError(
            "does not apply to the empa-release protocol (choose cases with --cases)",
            field="--language",
        )
    if config.director_mode != "model":
        raise ConfigError(
            "the empa-release protocol runs the release's own director (a model)",
            field="director_mode",
        )
    loader = release.modules["empa.data.loader"]
    if config.cases is None or config.cases == "official":
        ids = [str(x) for x in loader.load_official_cases()]
    elif config.cases == "all":
        ids = _all_ids(release)
    else:
        ids = list(config.cases)
    ids = ids[: config.limit] if config.limit else ids
    if not ids:
        raise ConfigError("no case selected", field="--cases")
    cases: list[ReleaseCase] = []
    for case_id in ids:
        try:
            loaded = loader.load_config(case_id)
        except Exception as exc:
            raise ConfigError(
                f"the release's loader cannot load case {case_id!r} ({type(exc).__name__}: {exc})",
                field="--cases",
            ) from None
        if not isinstance(loaded, Mapping) or not {"scenario", "actor_prompt"} <= set(loaded):
            raise ConfigError(
                f"the release's load_config({case_id!r}) did not return scenario and "
                f"actor_prompt; {INSTALL_HINT}",
                field="--protocol",
            )
        blob = json.dumps(loaded, sort_keys=True, ensure_ascii=False, default=str)
        digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()
        cases.append(ReleaseCase(id=case_id, digest=digest, config=dict(loaded)))
    return cases


def _system_prompt(config: RunConfig, rubric: Any) -> str:
    if config.system_prompt == "default":
        return str(rubric.generate_test_model_system_prompt())
    if config.system_prompt == "none":
        return ""
    try:
        return Path(config.system_prompt).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", file=config.system_prompt) from None


def system_prompt_version(config: RunConfig) -> str:
    """What the model under test's system prompt is, for the run's fingerprint."""
    if config.system_prompt in ("default", "none"):
        return f"{PROTOCOL}:{config.system_prompt}"
    try:
        text = Path(config.system_prompt).read_bytes()
    except OSError as exc:
        problem = f"cannot read: {exc.strerror or exc}"
        raise ConfigError(problem, file=config.system_prompt) from None
    return f"{PROTOCOL}:custom:{hashlib.sha256(text).hexdigest()[:16]}"


def fingerprint(config: RunConfig, release: Release) -> dict[str, str]:
    """The run's fingerprint: the roles and turn settings as for our protocol, plus the
    protocol and the release's version (a directory resumes only with the same release)."""
    parts = fingerprint_parts(config, system_prompt_version(config))
    return {**parts, "protocol": f"{PROTOCOL}@{release.version}"}


def manifest_parts(
    config: RunConfig, release: Release, cases: Sequence[ReleaseCase]
) -> tuple[dict[str, ScenarioInfo], list[PromptInfo]]:
    """The manifest's scenarios and prompts: the release's cases, its prompts by version."""
    source = f"empa {release.version} ({release.location})"
    infos = {
        c.id: ScenarioInfo(id=c.id, hash=c.digest, language="release", source=source) for c in cases
    }
    prompts = [
        PromptInfo(role="all", language="release", id=PROTOCOL, version=release.version),
        PromptInfo(
            role="model_under_test",
            language="release",
            id=f"{PROTOCOL}:{config.system_prompt}"
            if config.system_prompt in ("default", "none")
            else f"custom:{config.system_prompt}",
            version=system_prompt_version(config),
        ),
    ]
    return infos, prompts


# -- the bridge -------------------------------------------------------------------------
def _message(m: Any) -> Message:
    role = m.get("role") if isinstance(m, Mapping) else getattr(m, "role", None)
    content = m.get("content") if isinstance(m, Mapping) else getattr(m, "content", None)
    role = str(role) if str(role) in _MESSAGE_ROLES else "system"
    return Message(role=role, content="" if content is None else str(content))


def _tool_def(tool: Any) -> ToolDef:
    spec = tool.get("function", tool) if isinstance(tool, Mapping) else tool
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ValueError(f"a tool must be an OpenAI function spec, got {tool!r:.80}")
    params = spec.get("parameters") or {"type": "object", "properties": {}}
    return ToolDef(name=str(spec["name"]), description=str(spec.get("description") or ""),
                   parameters=dict(params))  # fmt: skip


def _accept_json(reply: RawReply) -> tuple[RawReply, bool]:
    """JSON mode: the text must be one JSON object (repaired when it can be)."""
    value, repaired = parse_json(reply.content or "")
    if not isinstance(value, dict):
        raise OutputInvalid("the reply is not a JSON object", reply.content or "")
    if repaired:
        reply = reply.model_copy(update={"content": json.dumps(value, ensure_ascii=False)})
    return reply, repaired


def _accept_tools(reply: RawReply) -> tuple[RawReply, bool]:
    """Tools offered: each call's arguments must be a JSON object; text alone is allowed."""
    if not reply.tool_calls:
        if reply.content is None or not reply.content.strip():
            raise OutputInvalid("the reply holds neither text nor a tool call", "")
        return reply, False
    fixed, any_repaired = [], False
    for call in reply.tool_calls:
        value, repaired = parse_json(call.arguments or "{}")
        if not isinstance(value, dict):
            raise OutputInvalid(f"the arguments of {call.name} are not a JSON object", "")
        any_repaired |= repaired
        fixed.append(call.model_copy(update={"arguments": json.dumps(value, ensure_ascii=False)}))
    return reply.model_copy(update={"tool_calls": fixed}), any_repaired


@dataclass
class _Dialogue:
    """What the bridges of one dialogue share: the loop, the calls made, the cancel flag."""

    loop: asyncio.AbstractEventLoop
    calls: list[ModelCallRecord] = field(default_factory=list)
    cancelled: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, record: CallRecord, agent: str) -> None:
        with self.lock:
            self.calls.append(
                ModelCallRecord(
                    role=record.role,
                    model=record.model,
                    latency_s=record.latency_s,
                    prompt_tokens=record.input_tokens,
                    cached_prompt_tokens=record.cached_input_tokens,
                    completion_tokens=record.output_tokens,
                    retries=record.retries,
                    cost_usd=record.cost_usd,
                    cache_hit=record.cache_hit,
                    template_id=f"{PROTOCOL}:{agent}",
                    error=record.error,
                    metadata={
                        "kind": record.kind,
                        "backend": record.backend,
                        "attempts": record.attempts,
                        "reasks": record.reasks,
                        "repaired": record.repaired,
                        "started_at": record.started_at,
                    },
                )
            )


class _Link:
    """One agent's way into empathos: its role's model client, the dialogue it belongs to."""

    def __init__(self, client: ModelClient, dialogue: _Dialogue, agent: str, release: Release):
        self.client = client
        self.dialogue = dialogue
        self.agent = agent
        self.response = release.attr("empa.llm.base", "LLMResponse")
        self.tool_call = release.attr("empa.llm.base", "ToolCall")

    def overrides(
        self, temperature: float, max_tokens: int | None, extra: Mapping[str, Any]
    ) -> tuple[dict[str, float | int], list[str]]:
        """The release's sampling for this call, less what the role's config sets itself."""
        asked: dict[str, float | int] = {
            "temperature": temperature,
            "frequency_penalty": RELEASE_PENALTY,
            "presence_penalty": RELEASE_PENALTY,
        }
        if max_tokens is not None:
            asked["max_tokens"] = max_tokens
        ignored: list[str] = []
        for key, value in extra.items():
            if key in SAMPLING_KEYS and isinstance(value, int | float):
                asked[key] = value
            elif key != "tool_choice":
                ignored.append(key)
        own = self.client.config.sampling()
        return {k: v for k, v in asked.items() if k not in own}, ignored

    def complete(
        self,
        messages: Sequence[Any],
        temperature: float,
        max_tokens: int | None,
        response_format: Mapping[str, Any] | None,
        tools: Sequence[Any] | None,
        extra_params: Mapping[str, Any] | None,
    ) -> Any:
        """Called in the release's thread: run the call on the event loop, wait for it."""
        if self.dialogue.cancelled.is_set():
            raise _Cancelled
        extra = dict(extra_params or {})
        overrides, ignored = self.overrides(temperature, max_tokens, extra)
        if ignored:
            print(f"[empathos bridge] {self.agent}: extra_params not sent: {', '.join(ignored)}")
        json_mode = (response_format or {}).get("type") in ("json_object", "json_schema")
        tool_defs = [_tool_def(t) for t in tools or ()]
        choice = extra.get("tool_choice")
        tool_choice: Literal["required", "auto"] | None = (
            choice if choice in ("required", "auto") else None
        )
        accept = _accept_tools if tool_defs else (_accept_json if json_mode else None)
        call = self.client.complete(
            [_message(m) for m in messages],
            json_mode=json_mode and not tool_defs,
            tools=tool_defs,
            tool_choice=tool_choice,
            accept=accept,
            **overrides,
        )
        future = asyncio.run_coroutine_threadsafe(call, self.dialogue.loop)
        while True:
            try:
                reply, record = future.result(timeout=0.2)
                break
            except TimeoutError:
                if self.dialogue.cancelled.is_set():
                    future.cancel()
                    raise _Cancelled from None
            except ModelCallError as exc:
                failed = record_of(exc)
                if failed is not None:
                    self.dialogue.add(failed, self.agent)
                raise
        self.dialogue.add(record, self.agent)
        calls = [self.tool_call(name=c.name, arguments=json.loads(c.arguments or "{}"))
                 for c in reply.tool_calls]  # fmt: skip
        return self.response(
            content=reply.content,
            tool_calls=calls,
            finish_reason=reply.finish_reason or ("tool_calls" if calls else "stop"),
            raw=reply.model_dump(),
        )


def _bridge_class(release: Release) -> type:
    """A subclass of the release's ``LLMClient`` whose calls go to a :class:`_Link`."""
    base: type = release.attr("empa.llm.base", "LLMClient")

    class EmpathosBridge(base):  # type: ignore[misc]
        """The release's LLMClient, answered by empathos's model client of one role."""

        def __init__(self, link: _Link) -> None:
            self._link = link

        @property
        def name(self) -> str:
            return self._link.client.config.model

        def complete(
            self,
            messages: Sequence[Any],
            *,
            temperature: float = 0.7,
            max_tokens: int | None = None,
            response_format: Mapping[str, Any] | None = None,
            tools: Sequence[Any] | None = None,
            extra_params: Mapping[str, Any] | None = None,
        ) -> Any:
            return self._link.complete(
                messages, temperature, max_tokens, response_format, tools, extra_params
            )

    return EmpathosBridge


def bridge_client(release: Release, client: ModelClient, agent: str) -> Any:
    """An instance of the release's ``LLMClient`` answered by ``client`` (for use from a
    thread other than the running event loop's, as the release's agents do)."""
    link = _Link(client, _Dialogue(loop=asyncio.get_running_loop()), agent, release)
    return _bridge_class(release)(link)


# -- one dialogue -----------------------------------------------------------------------
def _clients(roles: Roles) -> dict[str, ModelClient]:
    by_agent = {
        "actor": roles.user,
        "director": roles.director,
        "judger": roles.judge,
        "test_model": roles.tested,
    }
    out: dict[str, ModelClient] = {}
    for agent, model in by_agent.items():
        if not isinstance(model, ModelClient):
            raise TypeError(f"the {agent}'s model is not an empathos ModelClient: {model!r:.60}")
        out[agent] = model
    return out


def _run_loop(
    release: Release,
    case: ReleaseCase,
    config: RunConfig,
    bridges: Mapping[str, Any],
) -> Any:
    """The release's own loop, with its own agents (runs in a worker thread)."""
    rubric = release.attr("empa.rubric.empathy_v2.config", "EmpathyRubricV2")()
    prompt = _system_prompt(config, rubric)
    agents = release.modules["empa.agents"]
    director = agents.Director(
        bridges["director"],
        scenario=case.config["scenario"],
        actor_prompt=case.config["actor_prompt"],
    )
    run_chat_loop = release.attr("empa.orchestrator.chat_loop", "run_chat_loop")
    return run_chat_loop(
        agents.Actor(bridges["actor"]),
        director,
        agents.Judger(bridges["judger"]),
        agents.TestModel(bridges["test_model"], system_prompt=prompt),
        rubric,
        case.id,
        max_turns=config.max_turns,
        K=config.eval_every,
        test_model_name=config.role("model_under_test").model,
    )


def _error_document(case: ReleaseCase, config: RunConfig) -> dict[str, Any]:
    """A published-format stand-in for a dialogue that ended in an error (never scored)."""
    zero = [0, 0, 0]
    return {
        "script_id": case.id,
        "test_model_name": config.role("model_under_test").model,
        "total_turns": 0,
        "termination_reason": "error",
        "status": "error",
        "history": [],
        "epj": {
            "P_0_initial_deficit": zero,
            "trajectory": [
                {
                    "turn": 0,
                    "P_t": zero,
                    "v_t": zero,
                    "distance": 0.0,
                    "in_zone": False,
                    "epm": {"P_norm": 0.0, "E_total": 0.0, "projection": 0.0, "alignment": 0.0},
                }
            ],
            "K": config.eval_every,
            "epm_params": {"alpha": 0.1},
        },
    }


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EmpathosError):
        return exc.line()
    return f"the release's loop raised {type(exc).__name__}: {exc}"[:500]


def release_dialogue(
    release: Release, config: RunConfig, roles: Roles, run_dir: Path
) -> DialogueFn:
    """The runner's dialogue function for this protocol (call it inside the event loop)."""
    loop = asyncio.get_running_loop()
    # One worker thread per dialogue in flight (the default pool is sized by CPU count);
    # asyncio.run shuts it down at the end.
    loop.set_default_executor(
        ThreadPoolExecutor(max_workers=config.concurrency + 4, thread_name_prefix="empa-release")
    )
    clients = _clients(roles)
    bridge = _bridge_class(release)
    router = ThreadLogRouter()

    async def dialogue(job: Job) -> StoredRecord:
        case = job.scenario
        if not isinstance(case, ReleaseCase):
            raise TypeError(f"not a case of the release: {case!r:.60}")
        log = Path(LOGS_DIR) / f"{job.key.id}.log"
        state = _Dialogue(loop=loop)
        bridges = {
            agent: bridge(_Link(client, state, agent, release)) for agent, client in clients.items()
        }

        def work() -> Any:
            with router.capture(run_dir / log):
                return _run_loop(release, case, config, bridges)

        error: str | None = None
        with router.installed():
            try:
                document = await loop.run_in_executor(None, work)
            except asyncio.CancelledError:
                state.cancelled.set()
                raise
            except Exception as exc:
                error, document = _reason(exc), _error_document(case, config)
        if not isinstance(document, dict) or "epj" not in document:
            error = f"the release's loop returned no published-format result: {document!r:.80}"
            document = _error_document(case, config)
        return _stored(document, error, case, job, release, state, run_dir / log, config)

    return dialogue


def _stored(
    document: dict[str, Any],
    error: str | None,
    case: ReleaseCase,
    job: Job,
    release: Release,
    state: _Dialogue,
    log: Path,
    config: RunConfig,
) -> StoredRecord:
    """The record file's text (the release's result plus our mark) and the record read back."""
    mark: dict[str, Any] = {
        "protocol": PROTOCOL,
        "release_version": release.version,
        "dialogue_id": job.key.id,
        "trial": job.key.trial,
        "scenario_hash": case.digest,
        "log": f"{LOGS_DIR}/{log.name}",
        "model_calls": [c.model_dump(mode="json", exclude_none=True) for c in state.calls],
    }
    if error is not None:
        mark["error"] = error
    text = json.dumps({**document, "empathos": mark}, ensure_ascii=False, indent=1, default=str)
    try:
        record = record_from_data(json.loads(text), file=log)
    except RecordError as exc:
        mark["error"] = f"the release's result cannot be read: {exc.line()}"
        fallback = {**_error_document(case, config), "empathos": mark}
        text = json.dumps(fallback, ensure_ascii=False, indent=1, default=str)
        record = record_from_data(json.loads(text), file=log)
    return StoredRecord(record=record, text=text)
