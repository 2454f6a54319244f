"""API keys never appear in logs, exceptions, records or the cache."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from empathos.errors import ModelCallError
from empathos.llm import ResponseCache, build_model, record_of
from empathos.llm.testing import FaultServer, Step


class Verdict(BaseModel):
    label: Literal["yes", "no"] = Field(description="The verdict.")


def _files_text(folder: Path) -> list[str]:
    return [path.read_bytes().decode("latin-1") for path in folder.iterdir()]


async def test_api_key_never_leaks(
    stack: str,
    fault_server: FaultServer,
    make_config: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("EMPATHOS_TEST_API_KEY", key)
    caplog.set_level(logging.DEBUG)
    echo = json.dumps({"error": {"message": f"invalid key {key}", "type": "auth"}})
    fault_server.script(
        Step.ok('{"label": "yes"}'),
        Step.status(401, body=echo),  # a server that echoes the key back
        *[Step.status(500, body=echo)] * 2,
        Step.ok("not json"),
    )
    cache = ResponseCache(tmp_path / "cache.sqlite")
    config = make_config(
        fault_server.url, api_key_env="EMPATHOS_TEST_API_KEY", cache=True, max_attempts=2
    )
    model = build_model(config, role="judge", cache=cache)
    outputs: list[str] = [repr(config), config.model_dump_json()]
    ok = await model.structured([{"role": "user", "content": "a"}], Verdict)
    outputs.append(ok.record.model_dump_json())
    for content in ("b", "c", "d"):
        with pytest.raises(ModelCallError) as info:
            await model.structured([{"role": "user", "content": content}], Verdict)
        record = record_of(info.value)
        assert record is not None
        outputs += [str(info.value), repr(info.value), info.value.line(), record.model_dump_json()]
    await model.aclose()
    cache.close()

    assert fault_server.headers[0]["authorization"] == f"Bearer {key}"  # the key was used
    assert any("***" in text for text in outputs)  # the echoed key was redacted
    outputs += [r.getMessage() for r in caplog.records] + [caplog.text]
    captured = capsys.readouterr()
    outputs += [captured.out, captured.err]
    outputs += _files_text(tmp_path)  # the SQLite file and its WAL
    if stack == "httpx":
        assert any(r.name.startswith("openai") for r in caplog.records)  # DEBUG logs were seen
    leaks = [text[:80] for text in outputs if key in text]
    assert leaks == []


async def test_a_key_in_the_base_url_query_never_reaches_records(
    fault_server: FaultServer, make_config: Any
) -> None:
    # (user:password@ in a base URL is refused when the config is built: test_llm_client_wire)
    secret = f"pw{uuid.uuid4().hex}"
    url = fault_server.url + "?key=" + secret
    fault_server.script(Step.ok("hello"), Step.status(400))
    model = build_model(make_config(url, max_attempts=1), role="tested")
    ok = await model.chat([{"role": "user", "content": "hi"}])
    with pytest.raises(ModelCallError) as info:
        await model.chat([{"role": "user", "content": "again"}])
    await model.aclose()
    failed = record_of(info.value)
    assert failed is not None
    texts = [ok.record.model_dump_json(), failed.model_dump_json(), info.value.line()]
    assert ok.record.endpoint is not None and ok.record.endpoint.startswith("http://127.0.0.1:")
    assert [t[:80] for t in texts if secret in t] == []
    assert all(t.endswith("?key=" + secret) for t in fault_server.targets)  # yet it was sent
