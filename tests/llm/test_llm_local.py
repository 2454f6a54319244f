"""The local policy backend (``kind: local``, ``empathos run --policy``) on the bundled model:
a chat template that refuses a request fails that call and no other, the worker keeps
serving, and prompts are cut to the model's own context window.

Slow: they load the bundled SmolLM2-135M (a copy whose chat template and config are changed
here; the weights are linked, not copied)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from empathos.errors import ModelFatalError
from empathos.llm import EndpointConfig, build_model
from empathos.llm.offline.model import converted_dir, load_offline_model

pytestmark = pytest.mark.slow

# A chat template as some models ship it: a system message is refused with raise_exception
# (transformers turns it into jinja2's TemplateError).
NO_SYSTEM = (
    "{% for m in messages %}{% if m['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
CONTEXT = 256


@pytest.fixture(scope="module")
def picky_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model with a template that refuses system messages and a 256-token
    context window in its config."""
    load_offline_model()  # converts it on first use
    source, target = converted_dir(), tmp_path_factory.mktemp("picky")
    for item in source.iterdir():
        if item.suffix == ".safetensors":
            (target / item.name).symlink_to(item)
        else:
            shutil.copy(item, target / item.name)
    (target / "chat_template.jinja").write_text(NO_SYSTEM, encoding="utf-8")
    config = json.loads((target / "config.json").read_text(encoding="utf-8"))
    (target / "config.json").write_text(
        json.dumps({**config, "max_position_embeddings": CONTEXT}), encoding="utf-8"
    )
    return target


async def test_a_refused_chat_template_fails_its_call_and_the_worker_keeps_serving(
    picky_model: Path,
) -> None:
    config = EndpointConfig(kind="local", path=str(picky_model), max_tokens=3, temperature=0.0)
    model = build_model(config, role="model_under_test")
    system = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}]
    plain = [{"role": "user", "content": "Hi"}]
    try:
        # queued together: one batch, one request refused by the template
        refused, answered = await asyncio.wait_for(
            asyncio.gather(model.chat(system), model.chat(plain), return_exceptions=True), 120
        )
        later = await asyncio.wait_for(model.chat(plain), 120)  # the worker still serves
    finally:
        await model.aclose()
    assert getattr(model.backend, "batches", None) == [2, 1]  # the two shared one batch
    assert isinstance(refused, ModelFatalError), refused
    assert "TemplateError: System role not supported" in str(refused)
    assert not isinstance(answered, BaseException) and answered.text, answered
    assert later.text == answered.text  # greedy: the same reply


async def test_prompts_are_cut_to_the_models_own_context(picky_model: Path) -> None:
    config = EndpointConfig(kind="local", path=str(picky_model), max_tokens=4, temperature=0.0)
    model = build_model(config, role="model_under_test")
    long = [{"role": "user", "content": "tell me about the sea. " * 200}]  # ~1,200 tokens
    try:
        result = await asyncio.wait_for(model.chat(long), 120)
    finally:
        await model.aclose()
    assert result.record.input_tokens == CONTEXT - 4  # the most recent tokens, room for 4
