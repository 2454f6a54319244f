"""The client says what happened on the wire, keeps a base URL's query string, and refuses
base URLs that cannot work (credentials, another scheme, malformed) when the config is built.

Each fault runs against a real loopback socket, on both HTTP paths (the ``stack`` fixture):
empathos.llm.http1 posting directly (plain http, no proxy) and the SDK on httpx (what TLS or a proxy
variable selects; forced here with a proxy variable that loopback bypasses)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest
from llm_helpers import USER, chat_error
from pydantic import ValidationError

from empathos.errors import ModelTransientError
from empathos.llm import EndpointConfig, build_model
from empathos.llm.testing import FaultServer, Step, completion_body


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _fails_with(make_config: Any, url: str, **over: Any) -> str:
    return await chat_error(make_config(url, max_attempts=2, **over), ModelTransientError)


async def test_connection_refused_is_named(stack: str, make_config: Any) -> None:
    port = _free_port()  # nothing listens there now
    message = await _fails_with(make_config, f"http://127.0.0.1:{port}/v1")
    assert f"connection refused by 127.0.0.1:{port}" in message
    assert "timed out" not in message and "after 2 attempt(s)" in message


async def test_dns_failure_is_named(stack: str, make_config: Any) -> None:
    # .invalid never resolves (RFC 6761)
    message = await _fails_with(make_config, "http://no-such-host.invalid:8000/v1")
    assert "DNS lookup failed for no-such-host.invalid" in message
    assert "timed out" not in message


@pytest.mark.parametrize("step", [Step.drop(), Step.truncated()], ids=["no-reply", "cut-body"])
async def test_dropped_connection_is_named(
    stack: str, fault_server: FaultServer, make_config: Any, step: Step
) -> None:
    fault_server.script(step, step)
    message = await _fails_with(make_config, fault_server.url)
    assert f"connection dropped by 127.0.0.1:{fault_server.port}" in message
    assert "timed out" not in message


async def test_a_real_timeout_still_says_timed_out(
    stack: str, fault_server: FaultServer, make_config: Any
) -> None:
    fault_server.script(Step.slow(2.0), Step.slow(2.0))
    message = await _fails_with(make_config, fault_server.url, timeout_s=0.3)
    assert "timed out" in message and "refused" not in message and "dropped" not in message


async def test_base_url_query_string_goes_with_every_request(
    stack: str, fault_server: FaultServer, make_config: Any
) -> None:
    url = fault_server.url + "?api-version=2024-06-01&tenant=a%20b"
    model = build_model(make_config(url), role="judge")
    try:
        assert (await model.chat(USER)).text == "ok"
        assert (await model.chat(USER)).text == "ok"
    finally:
        await model.aclose()
    assert fault_server.targets == [
        "/v1/chat/completions?api-version=2024-06-01&tenant=a+b",
        "/v1/chat/completions?api-version=2024-06-01&tenant=a+b",
    ] or fault_server.targets == [
        "/v1/chat/completions?api-version=2024-06-01&tenant=a%20b",
        "/v1/chat/completions?api-version=2024-06-01&tenant=a%20b",
    ]


async def test_a_reply_json_reads_with_nan_and_non_ascii_as_before(
    stack: str, fault_server: FaultServer, make_config: Any
) -> None:
    # Python's json (what the SDK reads with) accepts NaN, which strict JSON parsers refuse;
    # some servers write it (e.g. in usage or logprobs). The direct path must read it too.
    body = json.dumps(completion_body("grüße, 你好")).replace('"total_tokens": 5', '"x": NaN')
    fault_server.script(Step("reply", body=body.encode()), Step.ok("plain"))
    model = build_model(make_config(fault_server.url), role="judge")
    try:
        assert (await model.chat(USER)).text == "grüße, 你好"
        assert (await model.chat(USER)).text == "plain"
    finally:
        await model.aclose()
    assert fault_server.requests[0]["messages"][-1] == USER[0]


def test_credentials_in_the_base_url_are_refused_without_echoing_them() -> None:
    with pytest.raises(ValidationError) as caught:
        EndpointConfig(base_url="http://alice:hunter2secret@127.0.0.1:8000/v1", model="m")
    text = str(caught.value)
    assert "api_key_env" in text and "credentials" in text
    assert "hunter2secret" not in text and "alice" not in text


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://127.0.0.1/v1", "http:// or https://"),
        ("127.0.0.1:8000/v1", "http:// or https://"),
        ("http://127.0.0.1:99999/v1", "not a valid URL"),
        ("http://[::1/v1", "not a valid URL"),
        ("http:///v1", "no host"),
        ("http://127.0.0.1:8000/v1 extra", "whitespace"),
    ],
)
def test_malformed_or_foreign_urls_are_config_errors(url: str, problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        EndpointConfig(base_url=url, model="m")


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("ftp://127.0.0.1:8000/v1", "http:// or https://"),
        ("http://bob:pw-in-url@127.0.0.1:8000/v1", "api_key_env"),
    ],
)
def test_cli_refuses_a_bad_base_url_before_running(tmp_path: Any, url: str, needle: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "empathos", "run", "--model", "m", "--base-url", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert needle in out.stderr and "Traceback" not in out.stderr
    assert "pw-in-url" not in out.stderr + out.stdout
    assert len(out.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing ran: no run directory
