"""Helpers shared by the model-access tests."""

from __future__ import annotations

import pytest

from empathos.llm import EndpointConfig, build_model

USER = [{"role": "user", "content": "hello"}]


async def chat_error(config: EndpointConfig, kind: type[Exception]) -> str:
    """The message of the ``kind`` error that one chat call (as the judge) ends with."""
    model = build_model(config, role="judge")
    try:
        with pytest.raises(kind) as caught:
            await model.chat(USER)
    finally:
        await model.aclose()
    return str(caught.value)


__all__ = ["USER", "chat_error"]
