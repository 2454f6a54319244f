"""Compact prompts: a variant per role and language, chosen by the endpoint's prompt style."""

from __future__ import annotations

import string

import pytest
import yaml

from empathos.errors import ConfigError
from empathos.llm import EndpointConfig, build_model, prompt_style_of
from empathos.prompts import (
    LANGUAGES,
    ROLES,
    director_prompt,
    judge_iedr_prompt,
    judge_mdep_prompt,
    load_template,
    model_under_test_prompt,
    render,
    user_prompt,
)
from empathos.prompts.render import templates_dir
from empathos.rubric.forms import IEDRForm, MDEPForm, form_skeleton
from empathos.scenarios import load_builtin


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("role", ROLES)
def test_every_role_has_a_compact_template(role: str, language: str) -> None:
    path = templates_dir() / language / f"{role}.compact.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    tpl = load_template(role, language, "compact")
    assert tpl.id == f"{role}.compact.{language}" == raw["id"]
    assert (tpl.role, tpl.language, tpl.style) == (role, language, "compact") and tpl.version
    full = load_template(role, language)
    assert full.style == "full" and full.id != tpl.id
    assert len(tpl.body) < len(full.body)  # compact means shorter
    found = {x for part in (tpl.body, tpl.turn) for x in string.Template(part).get_identifiers()}
    assert found == set(tpl.slots)
    out = render(role, language, style="compact", **{s: f"<{s}>" for s in tpl.slots})
    assert (out.id, out.version) == (tpl.id, tpl.version)


def test_a_bad_style_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="prompt style"):
        load_template("user", "en", "tiny")


@pytest.mark.parametrize("language", LANGUAGES)
def test_compact_builders_keep_what_each_role_may_see(language: str) -> None:
    scenario = next(s for s in load_builtin().scenarios if s.labels.language == language)
    stages = scenario.story.stages
    history = [("user", "first line"), ("model", "a reply")]
    p = user_prompt(
        scenario, released_stages=[1], newest_stage=1, history=history, guidance="hold back",
        style="compact",
    )  # fmt: skip
    assert p.id == f"user.compact.{language}"
    assert scenario.persona.identity.name in p.system and stages[0].content in p.tail
    assert all(s.content not in p.text for s in stages[1:])  # unreleased stages never leak
    assert "hold back" in p.tail and "first line" not in p.system  # the chat goes as messages
    msgs = p.messages()
    assert [m["role"] for m in msgs] == ["system", "assistant", "user"]
    # the person's own lines as the assistant's; what is on its mind now after the last line
    assert [m["content"] for m in msgs[1:]] == ["first line", f"a reply\n\n{p.tail}"]
    full = user_prompt(scenario, released_stages=[1], newest_stage=1, history=history)
    assert len(p.text) < len(full.text) / 2

    d = director_prompt(
        scenario, state="PACKET", released_stages=[1], turn=2, min_turns=3, max_turns=5,
        style="compact",
    )  # fmt: skip
    assert d.id == f"director.compact.{language}" and stages[1].title in d.system
    assert "PACKET" not in d.text and "2" in d.tail
    # the judge keeps its output schema in both styles
    iedr = judge_iedr_prompt(scenario, style="compact")
    assert form_skeleton(IEDRForm) in iedr.text and iedr.id == f"judge_iedr.compact.{language}"
    mdep = judge_mdep_prompt(scenario, history=history, window=history, k=1, style="compact")
    assert form_skeleton(MDEPForm) in mdep.text and "a reply" in mdep.text
    mut = model_under_test_prompt("default", language, "compact")
    assert mut is not None and mut.id == f"model_under_test.compact.{language}"


def test_prompt_style_follows_the_endpoint() -> None:
    assert EndpointConfig(kind="offline").resolved_prompt_style() == "compact"
    assert EndpointConfig(kind="scripted").resolved_prompt_style() == "full"
    url = "http://127.0.0.1:1/v1"
    assert EndpointConfig(base_url=url, model="m").resolved_prompt_style() == "full"
    small = EndpointConfig(base_url=url, model="m", prompt_style="compact")
    assert small.resolved_prompt_style() == "compact"
    assert EndpointConfig(kind="offline", prompt_style="full").resolved_prompt_style() == "full"
    assert prompt_style_of(build_model(small, "user")) == "compact"
    assert prompt_style_of(object()) == "full"


def test_offline_sampling_fields_are_refused_on_http_endpoints() -> None:
    with pytest.raises(ValueError, match="repetition_penalty is only used by kind 'offline'"):
        EndpointConfig(base_url="http://127.0.0.1:1/v1", model="m", repetition_penalty=1.2)
    cfg = EndpointConfig(kind="offline", repetition_penalty=1.0, no_repeat_ngram=0)
    assert cfg.sampling() == {"repetition_penalty": 1.0, "no_repeat_ngram": 0}
