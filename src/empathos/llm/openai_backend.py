"""The OpenAI-compatible HTTP backend (vLLM, SGLang, Ollama, llama.cpp, OpenRouter, OpenAI).

Built on the ``openai`` SDK's ``AsyncOpenAI`` with its own retries off (``max_retries=0``):
every failure is classified by :mod:`empathos.llm.retry` and retried there. With
``structured.json_schema="auto"`` a server that rejects ``response_format=json_schema``
(HTTP 400) is asked again at once with JSON mode, then with the plain instruction, and the
backend remembers what the endpoint accepts.

The request goes through the SDK's public ``post`` (auth header, timeouts, HTTP errors as
``openai`` exceptions) with the JSON body we build, not ``chat.completions.create`` (which
checks every parameter against its typed signature and builds pydantic objects from the
reply); we read the raw response's JSON ourselves. A plain ``http://`` endpoint with no proxy
configured (vLLM, SGLang, Ollama, ``empathos serve``) is posted to by
:mod:`empathos.llm.http1` instead, with the same request and the same error rules
(:func:`~empathos.llm.retry.classify_status`, ``classify_transport_error``); TLS and proxies
keep the SDK's HTTP stack. What each path costs per call: docs/models.md ("Retries"). On both,
``timeout_s`` bounds connecting and each silence of the server, ``deadline_s`` the attempt.

A query string in ``base_url`` (``?api-version=...``, as Azure OpenAI wants) is taken off the
URL and given to the SDK as ``default_query``, so every request carries it (glued to the base
URL it would end up inside the path).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import ssl
import urllib.parse
import urllib.request
import weakref
from typing import Any

import openai
import orjson

try:  # the HTTP library under the openai SDK: httpx2 from SDK 3 on, httpx before
    import httpx2 as sdk_http
except ImportError:  # pragma: no cover
    import httpx as sdk_http  # type: ignore[no-redef]

from empathos import __version__
from empathos.llm.completion import parse_completion
from empathos.llm.config import EndpointConfig, redact_url
from empathos.llm.http1 import (
    DeadlineError,
    HTTPReplyError,
    Pool,
    ReplyTooLargeError,
    ZoneError,
)
from empathos.llm.retry import (
    BackendError,
    classify_openai_error,
    classify_status,
    classify_transport_error,
)
from empathos.llm.structured import schema_instruction, with_instruction
from empathos.llm.types import ChatRequest, RawReply

__all__ = ["OpenAIBackend", "split_query"]

_NO_KEY = "EMPTY"  # local servers need some bearer token; this one is not a secret
_PATH = "/chat/completions"
# What ``create`` passes for this route: send the bearer token.
_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}
# httpcore's connection pool looks at each of its connections (probing every idle socket)
# whenever a request starts or ends, so its CPU cost per call grows with the pool's size: with
# 64 calls in flight it was a third of the framework's CPU. On the SDK's path (TLS, proxies)
# calls are spread over up to _MAX_POOLS pools of about _POOL_SIZE connections each.
_POOL_SIZE = 16
_MAX_POOLS = 8
# Idle connections are dropped after this long: under the 5 s idle timeout of uvicorn-based
# servers (vLLM, SGLang, empathos serve), so a connection the server is closing is never
# reused (the SDK's 5 s equals theirs: a call sent on a connection the server is closing
# fails without the server having seen it).
_KEEPALIVE_S = 4.0


def _plain_http(base_url: str) -> bool:
    """An ``http://`` URL with no credentials in it and no proxy configured in the
    environment (conservative: any HTTP proxy variable, even one NO_PROXY would bypass, keeps
    the SDK's own stack; credentials in the URL are refused when the config is built)."""
    proxies = urllib.request.getproxies()
    parts = urllib.parse.urlsplit(base_url)
    return parts.scheme == "http" and parts.username is None and not {"http", "all"} & set(proxies)


def _timeout(config: EndpointConfig) -> Any:
    """``timeout_s`` for connecting, sending and waiting on the server, and no limit on the
    wait for a connection of our own pool: a timeout measures the server, never our queue.
    (The endpoint's named limit in the model client admits at most ``max_concurrency`` calls
    and the pools have room for all of them, so that wait is short; under overload calls
    queue before the limit, and the run slows down instead of losing dialogues.)"""
    return sdk_http.Timeout(config.timeout_s, pool=None)


def _limits(config: EndpointConfig, keepalive: int) -> Any:
    """Room for every call the endpoint's limit admits; ``keepalive`` idle ones kept."""
    # The SDK's own Limits type (httpx or httpx2, depending on the SDK version).
    return type(openai.DEFAULT_CONNECTION_LIMITS)(
        max_connections=config.max_concurrency,
        max_keepalive_connections=keepalive,
        keepalive_expiry=_KEEPALIVE_S,
    )


def _pooled_http(config: EndpointConfig, pools: int, tls: ssl.SSLContext) -> Any:
    """The SDK's HTTP client with its own pool: room for every call in flight (no call ever
    waits for a connection), keeping alive its share of them. ``tls`` is the default TLS
    context, made once and shared (loading the CA bundle costs ~20 ms per client)."""
    limits = _limits(config, -(-config.max_concurrency // pools))
    return openai.DefaultAsyncHttpxClient(limits=limits, timeout=_timeout(config), verify=tls)


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """``base_url`` without its query string, and that query string's parameters."""
    parts = urllib.parse.urlsplit(base_url)
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit(parts._replace(query="", fragment="")), query


def _sdk_clients(config: EndpointConfig, api_key: str | None) -> list[openai.AsyncOpenAI]:
    """The endpoint's SDK clients (TLS or a proxy): one per _POOL_SIZE calls in flight, at most
    _MAX_POOLS."""
    assert config.base_url is not None
    base_url, query = split_query(config.base_url)
    pools = min(_MAX_POOLS, -(-config.max_concurrency // _POOL_SIZE))  # ceil division
    tls = sdk_http.create_ssl_context()  # what each client would make for itself
    return [
        openai.AsyncOpenAI(
            base_url=base_url,
            default_query=query or None,
            api_key=api_key or _NO_KEY,
            max_retries=0,
            timeout=_timeout(config),
            http_client=_pooled_http(config, pools, tls),
        )
        for _ in range(pools)
    ]


class _Shared:
    """The connection pool of one event loop and origin, and the backends that use it."""

    def __init__(self, host: str, port: int) -> None:
        self.pool = Pool(host, port, keepalive_s=_KEEPALIVE_S)
        self.users: set[_DirectPost] = set()


# Backends posting to one origin (host, port) in one event loop share a pool and its
# connections: a dialogue's roles call one after another, so the connection one role just
# used serves the next call at once. With a pool per role, each connection sat idle through
# the other roles' calls, past the server's keep-alive at L >= ~2 s a call, and nearly every
# call opened a new connection (18,000 connects for 18,000 calls of 1,000 dialogues).
_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Shared]] = (
    weakref.WeakKeyDictionary()
)


def _origin(parts: urllib.parse.SplitResult) -> tuple[str, int, str, str]:
    """The host to connect to (an IPv6 zone decoded: ``fe80::1%eth0``), the port, the Host
    header's value (no zone: RFC 6874 keeps it off the wire) and ``host:port`` for messages."""
    host, port = urllib.parse.unquote(parts.hostname or ""), parts.port or 80
    if ":" not in host:
        return host, port, parts.netloc, f"{host}:{port}"
    header = f"[{host.partition('%')[0]}]" + (f":{parts.port}" if parts.port else "")
    return host, port, header, f"[{host}]:{port}"


def _deadline_error(config: EndpointConfig) -> BackendError:
    return BackendError(
        "transient",
        f"request timed out (no complete reply within deadline_s, {config.deadline_s:g} s)",
    )


class _DirectPost:
    """POST a JSON body to a plain-HTTP endpoint's chat route with :mod:`empathos.llm.http1`:
    at most ``max_concurrency`` calls on the wire (the rest wait, untimed), over connections
    shared with the other backends of the same origin (idle ones dropped after _KEEPALIVE_S);
    ``timeout_s`` for connecting and for each wait on the server, ``deadline_s`` for the
    whole call."""

    def __init__(self, config: EndpointConfig, api_key: str | None) -> None:
        assert config.base_url is not None
        base_url, query = split_query(config.base_url)
        parts = urllib.parse.urlsplit(base_url)
        target = urllib.parse.quote(parts.path.rstrip("/") + _PATH, safe="/%:@!$&'()*+,;=~")
        if query:
            target += "?" + urllib.parse.urlencode(query)
        self._host, self._port, host_header, self.where = _origin(parts)
        # The request's head, up to the body's length: the same for every call.
        self._head = (
            f"POST {target} HTTP/1.1\r\n"
            f"Host: {host_header}\r\n"
            f"Authorization: Bearer {api_key or _NO_KEY}\r\n"
            "Content-Type: application/json\r\n"
            "Accept: application/json\r\n"
            f"User-Agent: empathos/{__version__}\r\n"
            "Content-Length: "
        ).encode("latin-1")
        self._config = config
        self._limit = config.max_concurrency
        self._slots = asyncio.Semaphore(self._limit)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: Pool | None = None

    def _join(self, loop: asyncio.AbstractEventLoop) -> Pool:
        """The running loop's pool for this origin (made on first use: connections belong to
        one event loop)."""
        per_loop = _SHARED.setdefault(loop, {})
        shared = per_loop.get(self.where)
        if shared is None or shared.pool.closed:
            shared = per_loop[self.where] = _Shared(self._host, self._port)
        shared.users.add(self)
        if self._loop is not loop:  # another event loop (a later asyncio.run): new slots too
            self._slots = asyncio.Semaphore(self._limit)
        self._loop, self._pool = loop, shared.pool
        return shared.pool

    async def post(self, body: dict[str, Any]) -> Any:
        """The reply's JSON; a BackendError for an HTTP error or a failure on the wire."""
        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is None or self._loop is not loop or pool.closed:
            pool = self._join(loop)
        data = orjson.dumps(body)  # UTF-8 JSON, ~18x faster than json.dumps on our bodies
        request = b"%b%d\r\n\r\n%b" % (self._head, len(data), data)
        async with self._slots:
            try:
                reply = await pool.request(request, self._config.timeout_s, self._config.deadline_s)
            except ReplyTooLargeError as exc:  # the same request would get the same reply
                raise BackendError("fatal", f"{exc} from {self.where}") from None
            except HTTPReplyError as exc:
                raise BackendError("transient", f"{exc} from {self.where}") from None
            except DeadlineError:
                raise _deadline_error(self._config) from None
            except ZoneError as exc:
                raise BackendError("fatal", f"{exc} in base_url") from None
            except OSError as exc:  # TimeoutError and ServerDisconnectedError are OSErrors
                raise classify_transport_error(exc, self.where) from None
        if reply.status >= 400:
            raise _status_error(reply.status, reply.body, reply.headers)
        if reply.status >= 300:  # not followed: a POST redirected is rarely meant to be
            where = redact_url(reply.headers.get("location")) or "nowhere"
            raise BackendError(
                "fatal",
                f"HTTP {reply.status}: redirected to {where} (put the final address in base_url)",
                status=reply.status,
            )
        return _json_body(reply.body)

    async def aclose(self) -> None:
        """Leave the shared pool; the last backend to leave closes it."""
        if self._loop is None:
            return
        per_loop = _SHARED.get(self._loop, {})
        shared = per_loop.get(self.where)
        self._pool = None
        if shared is None:
            return
        shared.users.discard(self)
        if not shared.users:
            del per_loop[self.where]
            await shared.pool.aclose()


def _json_body(raw: bytes) -> Any:
    """A reply body's JSON; json's leniencies (NaN, UTF-16) when orjson's strict parser
    refuses it; a transient BackendError when neither can read it."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except ValueError:
        raise BackendError("transient", "unreadable response body (not JSON)") from None


def _status_error(status: int, raw: bytes, headers: Any) -> BackendError:
    """The BackendError of an HTTP error reply, from its OpenAI-style ``error`` object (the
    message the SDK would give: ``Error code: N - message``)."""
    message = f"Error code: {status}"
    code: str | None = None
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        if isinstance(error.get("message"), str) and error["message"]:
            message += f" - {error['message']}"
        code = str(error["code"]) if error.get("code") is not None else None
    return classify_status(status, message, code, headers)


def _schema_name(name: str | None) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name or "")
    return cleaned[:64] or "response"


class OpenAIBackend:
    """One endpoint's HTTP client."""

    kind = "openai"

    def __init__(self, config: EndpointConfig, api_key: str | None) -> None:
        assert config.base_url is not None
        self.config = config
        self.endpoint: str | None = redact_url(config.base_url)  # records never hold credentials
        self._secret = api_key
        if _plain_http(config.base_url):
            self._direct: _DirectPost | None = _DirectPost(config, api_key)
            self._clients: list[openai.AsyncOpenAI] = []
        else:
            self._direct = None
            self._clients = _sdk_clients(config, api_key)  # used round-robin
        self._next = itertools.cycle(self._clients)
        mode = config.structured.json_schema
        # What the endpoint accepts for structured output, best first; "auto" may fall back.
        self._formats: list[str] = (
            ["json_schema"] if mode == "on" else (["json_schema"] if mode == "auto" else [])
        )
        if mode != "on":
            if config.structured.json_mode:
                self._formats.append("json_object")
            self._formats.append("none")
        self._adaptive = mode == "auto"
        self._tool_choice_ok = True  # False once the endpoint rejected tool_choice

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._direct is not None:
            await self._direct.aclose()
        for client in self._clients:
            await client.close()

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _kwargs(self, request: ChatRequest, fmt: str) -> dict[str, Any]:
        """The request body. The messages come last, after what stays the same from call to
        call (tools, response format, sampling), so that two calls of a role share the
        longest prefix a prefix cache can serve. A response schema that is not sent (the
        endpoint took JSON mode or nothing) goes into the system message instead."""
        kwargs: dict[str, Any] = {"model": request.model}
        messages = request.messages
        if request.tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "parameters": t.parameters}
                    | ({"description": t.description} if t.description else {}),
                }
                for t in request.tools
            ]
            if request.tool_choice and self._tool_choice_ok:
                kwargs["tool_choice"] = request.tool_choice
        elif request.response_schema is not None and fmt == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(request.schema_name),
                    "schema": request.response_schema,
                },
            }
        elif (request.response_schema is not None and fmt == "json_object") or (
            request.json_mode and fmt in ("json_schema", "json_object")  # no schema to send
        ):
            kwargs["response_format"] = {"type": "json_object"}
        if not request.tools and request.response_schema is not None and fmt != "json_schema":
            messages = with_instruction(messages, schema_instruction(request.response_schema))
        kwargs.update(request.params)
        if request.stop:
            kwargs["stop"] = list(request.stop)
        kwargs["messages"] = [{"role": m.role, "content": m.content} for m in messages]
        return kwargs

    def _structured(self, request: ChatRequest) -> bool:
        return not request.tools and (request.response_schema is not None or request.json_mode)

    def _downgrade(self, request: ChatRequest, err: BackendError) -> bool:
        """After a 400/422, drop what the endpoint may not support; True: ask again."""
        if err.status not in (400, 422):
            return False
        if request.tools and request.tool_choice and self._tool_choice_ok:
            self._tool_choice_ok = False  # e.g. servers without tool_choice="required"
            return True
        if self._adaptive and self._structured(request) and len(self._formats) > 1:
            self._formats.pop(0)
            return True
        return False

    async def _post(self, body: dict[str, Any]) -> Any:
        """One POST of ``body``; the reply's JSON, or a classified BackendError."""
        if self._direct is not None:
            return await self._direct.post(body)
        deadline = asyncio.timeout(self.config.deadline_s)
        try:
            async with deadline:
                # cast_to=sdk_http.Response: the SDK returns the (fully read) response as is.
                response = await next(self._next).post(
                    _PATH, cast_to=sdk_http.Response, body=body, options=_OPTIONS
                )
            return response.json()
        except TimeoutError as exc:
            if deadline.expired():
                raise _deadline_error(self.config) from None
            raise classify_openai_error(exc) from None
        except (openai.OpenAIError, OSError, ValueError) as exc:
            raise classify_openai_error(exc) from None

    async def complete(self, request: ChatRequest) -> RawReply:
        """One HTTP attempt; on HTTP 400/422 falls back (schema -> JSON mode -> prompt; no
        tool_choice) once per feature and remembers it."""
        while True:
            fmt = self._formats[0] if self._formats else "none"
            try:
                body = await self._post(self._kwargs(request, fmt))
            except BackendError as err:
                err.message = self._redact(err.message)
                if self._downgrade(request, err):
                    continue
                raise err from None
            return parse_completion(body)
