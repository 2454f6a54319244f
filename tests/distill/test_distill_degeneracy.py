"""Degenerate distiller output is never written as a scenario (issue 24, point 5).

Each scripted distiller below fails the way the bundled 135M model does: one value in every
field, the format's own descriptions copied into the fields, or a judge whose IEDR gives a
zero starting deficit. Each item must fail with its reason (console, state, manifest) and stay
out of ``scenarios/``; the scenarios we ship must not be flagged (no false positives)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from distill_handlers import handler

from conftest import CORPUS, scripted
from empathos.distill import DistillOptions, read_conversations, run_distill
from empathos.distill.checks import degeneracy
from empathos.distill.prompts import format_texts
from empathos.distill.schema import CrisisDraft
from empathos.llm import ChatRequest, EndpointConfig, ModelClient
from empathos.llm.scripted import Reply
from empathos.scenarios import load_builtin

MODELS = {"distiller": "scripted:test", "judge": "scripted:test"}


def _fill(schema: dict[str, Any], value: Callable[[str], str], path: str = "") -> Any:
    """Every string of ``schema`` (a dumped draft) replaced by ``value(path)``."""
    if isinstance(schema, dict):
        return {k: _fill(v, value, f"{path}.{k}") for k, v in schema.items()}
    if isinstance(schema, list):
        return [_fill(v, value, f"{path}[{i}]") for i, v in enumerate(schema)]
    if isinstance(schema, str) and not path.endswith((".level", ".gender")):
        return value(path)
    return schema


def _one_name(request: ChatRequest) -> Reply:
    out = handler(request)
    if request.schema_name in ("PersonaDraft", "CrisisDraft"):
        assert isinstance(out, dict)
        return _fill(out, lambda _: "Alejandro")
    return out


_DESCRIPTIONS = {
    "topic": CrisisDraft.model_fields["topic"].description,
    "trigger": CrisisDraft.model_fields["trigger"].description,
    "outcome": CrisisDraft.model_fields["outcome"].description,
    "interlude": CrisisDraft.model_fields["interlude"].description,
}


def _instruction(field: str, language: str) -> str:
    """What the crisis template tells the model to write in ``field`` (after 'field:')."""
    line = next(
        t for t in format_texts(language) if re.match(rf"{field}\s*[:：]", t)
    )  # e.g. "topic: the person's first line in the chat, ..."
    return re.split(r"[:：]", line, maxsplit=1)[1].strip()


def _copies_format(request: ChatRequest) -> Reply:
    """The crisis fields hold the template's instructions (in the scenario's language)."""
    out = handler(request)
    if request.schema_name == "CrisisDraft":
        assert isinstance(out, dict)
        lang = "zh" if "请用中文" in "\n".join(m.content for m in request.messages) else "en"
        out = {**out, **{f: _instruction(f, lang) for f in ("topic", "trigger", "outcome")}}
    return out


def _zero_iedr(request: ChatRequest) -> Reply:
    if request.schema_name == "IEDRForm":
        return {k: {"level": 0, "evidence": "0", "reasoning": "r"} for k in _IEDR_KEYS}
    return handler(request)


_IEDR_KEYS = ("C.1", "C.2", "C.3", "A.1", "A.2", "A.3", "P.1", "P.2", "P.3")


async def _run(tmp_path: Path, h: Callable[[ChatRequest], Reply]) -> tuple[Any, Path]:
    distiller, backend = scripted(h)
    judge = ModelClient(backend, EndpointConfig(kind="scripted"), role="judge")
    convs = [c for c in read_conversations([CORPUS]) if c.id in ("en-bakery", "zh-gaokao")]
    out = tmp_path / "out"
    summary = await run_distill(convs, distiller, judge, DistillOptions(out=out), models=MODELS)
    return summary, out


@pytest.mark.parametrize(
    ("h", "expected"),
    [
        (_one_name, "degenerate output: "),
        (_copies_format, "copies the format's own descriptions"),
        (_zero_iedr, "iedr: degenerate starting point P_0 = (0, 0, 0)"),
    ],
    ids=["one-name-everywhere", "copies-descriptions", "zero-iedr"],
)
async def test_a_degenerate_item_fails_with_its_reason_and_is_not_written(
    tmp_path: Path, h: Callable[[ChatRequest], Reply], expected: str
) -> None:
    summary, out = await _run(tmp_path, h)
    assert [i.status for i in summary.items] == ["failed", "failed"], summary.items
    assert all(expected in i.reason for i in summary.items), [i.reason for i in summary.items]
    assert list((out / "scenarios").glob("*.yaml")) == []
    manifest = json.loads((out / "distill.json").read_text("utf-8"))
    assert manifest["counts"] == {"written": 0, "skipped": 0, "failed": 2, "duplicate": 0}
    for item in summary.items:
        status = json.loads((out / "state" / item.source_id / "status.json").read_text("utf-8"))
        assert status["status"] == "failed" and expected in status["reason"]


async def test_the_scripted_distiller_itself_is_not_degenerate(tmp_path: Path) -> None:
    summary, out = await _run(tmp_path, handler)
    assert summary.count("written") == 2, [i.reason for i in summary.items]
    assert len(list((out / "scenarios").glob("*.yaml"))) == 2


def test_the_bundled_scenarios_are_not_flagged() -> None:
    for s in load_builtin().scenarios:
        assert degeneracy(s, format_texts(s.labels.language)) == [], s.id


def test_each_sign_is_named() -> None:
    base = load_builtin().scenarios[0]
    p = base.persona
    name = "Alejandro"
    one = base.model_copy(
        update={
            "persona": p.model_copy(
                update={
                    "identity": p.identity.model_copy(update={"name": name}),
                    "traits": p.traits.model_copy(update={"outer": name, "inner": name}),
                    "needs": p.needs.model_copy(update=dict.fromkeys(dict(p.needs), name)),
                    "experience": p.experience.model_copy(
                        update=dict.fromkeys(dict(p.experience), name)
                    ),
                    "priorities": p.priorities.model_copy(
                        update={
                            a: getattr(p.priorities, a).model_copy(update={"rationale": name})
                            for a in ("cognitive", "affective", "proactive")
                        }
                    ),
                }
            )
        }
    )
    signs = degeneracy(one)
    assert any("text fields repeat one value ('Alejandro')" in x for x in signs), signs
    stages = [st.model_copy(update={"content": "same"}) for st in base.story.stages]
    flat = base.model_copy(update={"story": base.story.model_copy(update={"stages": stages})})
    assert degeneracy(flat) == ["the four story stages are one text"]
    copied = base.model_copy(
        update={"persona": base.persona.model_copy(update={"trigger": _DESCRIPTIONS["trigger"]})}
    )
    signs = degeneracy(copied, format_texts("en"))
    assert len(signs) == 1 and "persona.trigger" in signs[0], signs
