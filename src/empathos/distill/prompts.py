"""The distiller's prompts: versioned templates ``templates/<lang>/distill_*.yaml``.

They follow the format of :mod:`empathos.prompts` (id, version, declared slots, a
``string.Template`` body) and are checked the same way: the body must use exactly the declared
slots, and rendering refuses a missing or unknown slot. They are loaded here rather than
through :func:`empathos.prompts.render`, whose role list belongs to the dialogue roles.
"""

from __future__ import annotations

import re
import string
from functools import cache
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from empathos.distill.schema import CrisisDraft, Features, PersonaDraft, VariantDraft
from empathos.errors import ConfigError
from empathos.prompts import RenderedPrompt
from empathos.prompts.render import PromptTemplate, fill, fragments, templates_dir

__all__ = [
    "STAGE_TEMPLATES",
    "DistillTemplate",
    "format_texts",
    "load_distill_template",
    "render_distill",
    "threshold_meaning",
]

DistillTemplate = Literal["distill_extract", "distill_persona", "distill_crisis", "distill_expand"]
STAGE_TEMPLATES: tuple[str, ...] = (
    "distill_extract",
    "distill_persona",
    "distill_crisis",
    "distill_expand",
)


@cache
def load_distill_template(name: str, language: str) -> PromptTemplate:
    """The bundled distiller template ``name`` in ``language`` (validated, cached)."""
    if name not in STAGE_TEMPLATES:
        raise ConfigError(f"unknown template {name!r}", field="template")
    if language not in ("en", "zh"):
        raise ConfigError(f"unknown language {language!r}; choose en or zh", field="language")
    path = templates_dir() / language / f"{name}.yaml"
    try:
        tpl = PromptTemplate.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"unreadable template: {exc}", file=path) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(first["msg"], file=path, field=".".join(map(str, first["loc"]))) from None
    used = {
        m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(tpl.body)
    }
    used.discard(None)
    if used != set(tpl.slots):
        raise ConfigError(
            f"body uses {sorted(x for x in used if x)} but declares {tpl.slots}",
            file=path,
            field="slots",
        )
    return tpl


def render_distill(name: str, language: str, **slots: str) -> RenderedPrompt:
    """Fill distiller template ``name``; every declared slot, and only those."""
    tpl = load_distill_template(name, language)
    missing = sorted(set(tpl.slots) - set(slots))
    extra = sorted(set(slots) - set(tpl.slots))
    if missing or extra:
        raise ConfigError(
            f"missing slots {missing}, unknown slots {extra}",
            file=f"{language}/{name}.yaml",
            field=tpl.id,
        )
    text = fill(tpl.body, slots)
    return RenderedPrompt(id=tpl.id, version=tpl.version, text=text.strip() + "\n")


def threshold_meaning(threshold: str, language: str) -> str:
    """One line explaining an empathy threshold (shared with the judge's prompt fragments)."""
    return fragments(language)[f"judge.threshold.{threshold}"]


def _descriptions(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in _descriptions(v)]
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


@cache
def format_texts(language: str) -> tuple[str, ...]:
    """What the distiller is told about the format, phrase by phrase: the fixed text of the
    distiller templates in ``language`` (slots removed; each instruction line and what follows
    a field name's colon) and every description of the answer schemas. A model too small for
    the task copies these into the fields (see :func:`empathos.distill.checks.degeneracy`)."""
    out: list[str] = []
    for name in STAGE_TEMPLATES:
        body = string.Template.pattern.sub("", load_distill_template(name, language).body)
        for line in body.splitlines():
            line = line.strip().lstrip("-#").strip()
            if line:
                out.append(line)
                out += [part.strip() for part in re.split(r"[:：]", line)[1:] if part.strip()]
    for schema in (Features, PersonaDraft, CrisisDraft, VariantDraft):
        out += _descriptions(schema.model_json_schema())
    return tuple(dict.fromkeys(out))
