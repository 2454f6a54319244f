"""Prompt templates as data: one versioned YAML file per role and language.

A template file ``templates/<lang>/<role>.yaml`` holds ``id``, ``version``, ``role``,
``language``, ``style``, the declared ``slots``, the ``body`` and, for the roles that speak
every turn, the ``turn`` (``string.Template`` syntax: ``$slot`` or ``${slot}``; a literal
dollar is ``$$``). Python only fills slots: :func:`render` refuses a missing slot and an
undeclared one, so a template and its caller cannot drift apart silently.

Built for prefix caches (:class:`ChatPrompt`): the ``body`` is the system message, fixed
through a dialogue; the dialogue so far follows and only ever grows at its end; the ``turn``
part, what is new this turn, comes last.
Every role also has a *compact* variant (``templates/<lang>/<role>.compact.yaml``, id
``<role>.compact.<lang>``): a few sentences for small local models (see docs/prompts.md).
The id and version of every rendered prompt belong in the record of the call that used it.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empathos.errors import ConfigError

__all__ = [
    "LANGUAGES",
    "ROLES",
    "STYLES",
    "ChatPrompt",
    "ChatRole",
    "PromptStyle",
    "PromptTemplate",
    "RenderedPrompt",
    "Role",
    "fill",
    "fragment",
    "fragments",
    "load_template",
    "render",
    "render_chat",
    "template_file",
    "templates_dir",
]

Role = Literal["user", "director", "judge_iedr", "judge_mdep", "model_under_test", "judge_pairwise"]
ROLES: tuple[str, ...] = get_args(Role)
LANGUAGES: tuple[str, ...] = ("en", "zh")
PromptStyle = Literal["full", "compact"]
STYLES: tuple[str, ...] = get_args(PromptStyle)


class PromptTemplate(BaseModel):
    """One template file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Stable template id, e.g. 'user.en'.")
    version: str = Field(min_length=1, description="Bumped whenever the body changes meaning.")
    role: str = Field(description="The role it prompts.")
    language: str = Field(description="Language of the body: zh or en.")
    style: PromptStyle = Field(
        "full", description="'full' (the default) or 'compact' (a few sentences, small models)."
    )
    slots: list[str] = Field(
        default_factory=list, description="Names the body and the turn part expect."
    )
    body: str = Field(
        min_length=1,
        description="The text, with $slot placeholders; for a role that speaks every turn, "
        "the system message (fixed through a dialogue).",
    )
    turn: str = Field(
        "",
        description="What is new each turn, sent after the dialogue so far ('' for one-off "
        "prompts and the model under test's system prompt).",
    )


class RenderedPrompt(BaseModel):
    """A filled template: the text to send plus what to record about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Template id (or 'custom:<file>' for a user-supplied prompt).")
    version: str = Field(description="Template version (content hash for custom prompts).")
    text: str = Field(description="The rendered text.")

    @property
    def sha256(self) -> str:
        """Hash of the rendered text, for records that store a hash instead of the text."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


ChatRole = Literal["user", "assistant"]


class ChatPrompt(BaseModel):
    """A role's prompt as chat messages, laid out for prefix caches.

    First the system message (``system``: instructions, card, rubric; fixed through a
    dialogue), then the dialogue so far (``chat``: chat messages, or one user message whose
    text grows at its end), then what is new this turn (``tail``), appended to the last
    message. So the prompt of turn t+1 begins with the prompt of turn t minus its ``tail``
    (:meth:`stable_messages`), and a prefix cache serves all of that."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Template id, e.g. 'judge_mdep.en'.")
    version: str = Field(description="Template version.")
    system: str = Field(description="The system message: fixed through a dialogue.")
    chat: tuple[tuple[ChatRole, str], ...] = Field(
        (), description="The dialogue so far, as (role, text) messages; grows only at its end."
    )
    tail: str = Field(
        "",
        description="What is new this turn: appended to the last user message (a user "
        "message of its own when the chat is empty or ends with the assistant's).",
    )

    def messages(self) -> list[dict[str, str]]:
        """The messages to send: system, the chat, the tail last."""
        chat = list(self.chat)
        if self.tail:
            if chat and chat[-1][0] == "user":
                chat[-1] = ("user", f"{chat[-1][1]}\n\n{self.tail}" if chat[-1][1] else self.tail)
            else:
                chat.append(("user", self.tail))
        return [{"role": "system", "content": self.system}] + [
            {"role": role, "content": text} for role, text in chat
        ]

    def stable_messages(self) -> list[dict[str, str]]:
        """The messages without this turn's tail: what the next turn's prompt begins with."""
        return self.model_copy(update={"tail": ""}).messages()

    @property
    def text(self) -> str:
        """Every message's text, in order (for reading and searching, not for sending)."""
        return "\n\n".join(m["content"] for m in self.messages())


def templates_dir() -> Path:
    """The directory of the bundled templates (one folder per language)."""
    return Path(str(resources.files("empathos.prompts") / "templates"))


def _read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"unreadable template: {exc}", file=path) from None


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ConfigError(
            f"unknown language {language!r}; choose one of {list(LANGUAGES)}", field="language"
        )


def template_file(role: str, style: str = "full") -> str:
    """The file name of a template: ``<role>.yaml`` or ``<role>.compact.yaml``."""
    return f"{role}.yaml" if style == "full" else f"{role}.{style}.yaml"


@cache
def load_template(role: str, language: str, style: str = "full") -> PromptTemplate:
    """The bundled template of ``role`` in ``language`` and ``style`` (validated, cached)."""
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r}; choose one of {list(ROLES)}", field="role")
    _check_language(language)
    if style not in STYLES:
        raise ConfigError(
            f"unknown prompt style {style!r}; choose one of {list(STYLES)}", field="prompt_style"
        )
    path = templates_dir() / language / template_file(role, style)
    try:
        tpl = PromptTemplate.model_validate(_read_yaml(path))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(first["msg"], file=path, field=".".join(map(str, first["loc"]))) from None
    if tpl.style != style:
        raise ConfigError(f"declares style {tpl.style!r}, expected {style!r}", file=path)
    used = {
        m.group("named") or m.group("braced")
        for part in (tpl.body, tpl.turn)
        for m in string.Template.pattern.finditer(part)
    } - {None}
    if used != set(tpl.slots):
        raise ConfigError(
            f"body uses {sorted(x for x in used if x)} but declares {tpl.slots}",
            file=path,
            field="slots",
        )
    return tpl


@cache
def fragments(language: str) -> dict[str, str]:
    """The small per-language phrases (labels, headings) the block renderers use."""
    _check_language(language)
    path = templates_dir() / language / "fragments.yaml"
    data = _read_yaml(path)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError("expected a mapping of strings", file=path)
    return {str(k): v for k, v in data.items()}


@cache
def _pieces(body: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``body`` split once by ``string.Template``'s own pattern: its literal runs (``$$``
    already a ``$``) and, between them, its slot names; None if it has an invalid
    placeholder."""
    literals, names, run, pos = [], [], [], 0
    for m in string.Template.pattern.finditer(body):
        run.append(body[pos : m.start()])
        name = m.group("named") or m.group("braced")
        if name is not None:
            literals.append("".join(run))
            names.append(name)
            run = []
        elif m.group("escaped") is not None:
            run.append("$")
        else:
            return None
        pos = m.end()
    run.append(body[pos:])
    literals.append("".join(run))
    return tuple(literals), tuple(names)


def fill(body: str, values: Mapping[str, object]) -> str:
    """``string.Template(body).substitute(values)``, the same text and errors, without
    scanning ``body`` again on every call (prompts are filled several times a turn)."""
    pieces = _pieces(body)
    if pieces is None:  # an invalid placeholder: Template's own error message
        return string.Template(body).substitute(values)
    literals, names = pieces
    out = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        out.append(str(values[name]))
        out.append(literal)
    return "".join(out)


def fragment(language: str, frag: str, /, **values: object) -> str:
    """The fragment ``frag`` of ``language``'s ``fragments.yaml``, filled with ``values``."""
    return fill(fragments(language)[frag], values)


def _checked(role: str, language: str, style: str, slots: Mapping[str, str]) -> PromptTemplate:
    """The template, once the slots given are exactly the declared ones."""
    tpl = load_template(role, language, style)
    missing = sorted(set(tpl.slots) - set(slots))
    extra = sorted(set(slots) - set(tpl.slots))
    if missing or extra:
        problem = "; ".join(
            x
            for x in (
                f"missing slots {missing}" if missing else "",
                f"unknown slots {extra}" if extra else "",
            )
            if x
        )
        raise ConfigError(problem, file=f"{language}/{template_file(role, style)}", field=tpl.id)
    return tpl


def render(role: str, language: str, /, *, style: str = "full", **slots: str) -> RenderedPrompt:
    """Fill the template of ``role`` in ``language`` (and ``style``); every declared slot, and
    only those. The ``turn`` part, if any, follows the body."""
    tpl = _checked(role, language, style, slots)
    text = fill(tpl.body, slots).strip()
    if tpl.turn:
        text += "\n\n" + fill(tpl.turn, slots).strip()
    return RenderedPrompt(id=tpl.id, version=tpl.version, text=text + "\n")


def render_chat(
    role: str,
    language: str,
    /,
    *,
    style: str = "full",
    chat: tuple[tuple[ChatRole, str], ...] = (),
    **slots: str,
) -> ChatPrompt:
    """Fill the template of ``role`` as a :class:`ChatPrompt`: the body is the system
    message, ``chat`` the dialogue so far, the ``turn`` part the tail."""
    tpl = _checked(role, language, style, slots)
    return ChatPrompt(
        id=tpl.id,
        version=tpl.version,
        system=fill(tpl.body, slots).strip(),
        chat=chat,
        tail=fill(tpl.turn, slots).strip() if tpl.turn else "",
    )
