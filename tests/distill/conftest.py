"""Shared helpers of the distill tests: scripted clients that keep every request."""

from __future__ import annotations

from pathlib import Path

import pytest
from distill_handlers import handler

from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend
from empathos.llm.scripted import Handler

CORPUS = Path(__file__).parents[2] / "src" / "empathos" / "distill" / "data" / "corpus.jsonl"
HANDLERS = Path(__file__).with_name("distill_handlers.py").resolve()


def scripted(h: Handler = handler, role: str = "distiller") -> tuple[ModelClient, ScriptedBackend]:
    backend = ScriptedBackend(h)
    return ModelClient(backend, EndpointConfig(kind="scripted"), role=role), backend


@pytest.fixture
def corpus() -> Path:
    return CORPUS
