"""Fixtures of the model-access tests: a misbehaving loopback server and fast retry configs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from empathos.llm import EndpointConfig, RetryConfig, StructuredConfig
from empathos.llm.openai_backend import _plain_http
from empathos.llm.testing import FaultServer


@pytest.fixture(scope="module")
def fault_server_module() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture
def fault_server(fault_server_module: FaultServer) -> FaultServer:
    """The module's fault server with an empty script and request log."""
    server = fault_server_module
    server.script()
    server.requests.clear()
    server.headers.clear()
    server.targets.clear()
    server.max_in_flight = 0
    return server


def fast_config(base_url: str | None = None, **over: Any) -> EndpointConfig:
    """An endpoint config with tiny backoffs so fault tests take milliseconds."""
    retry = RetryConfig(
        max_attempts=over.pop("max_attempts", 3),
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        jitter_s=0.005,
        retry_after_max_s=over.pop("retry_after_max_s", 1.0),
    )
    structured = StructuredConfig(
        max_reasks=over.pop("max_reasks", 1),
        json_schema=over.pop("json_schema", "auto"),
    )
    kind = over.pop("kind", "openai" if base_url else "scripted")
    return EndpointConfig(
        kind=kind,
        base_url=base_url,
        model="test-model",
        timeout_s=over.pop("timeout_s", 5.0),
        retry=retry,
        structured=structured,
        **over,
    )


@pytest.fixture
def make_config() -> Any:
    return fast_config


@pytest.fixture(params=["direct", "httpx"])
def stack(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The HTTP path to a plain http:// loopback endpoint: ``direct`` (empathos.llm.http1, as
    without a proxy) or ``httpx`` (the SDK's own stack, as with TLS or a proxy variable)."""
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    if request.param == "httpx":
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # never used: loopback bypasses
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost,no-such-host.invalid")
    assert _plain_http("http://127.0.0.1:1/v1") == (request.param == "direct")
    return str(request.param)
