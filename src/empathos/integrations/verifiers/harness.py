"""The assistant's harness: verifiers' tool-less chat program (its ``null`` harness), run on
this environment's own Python when the runtime is the local subprocess one.

verifiers runs a harness's chat program as a PEP 723 script in an environment ``uv`` builds
(fetching openai, httpx, mcp ... from PyPI on first use). On the local subprocess runtime the
program needs nothing this environment lacks (those are verifiers' own dependencies), so
:class:`EmpaChatHarness` runs it with ``sys.executable``: a local eval needs neither ``uv`` nor
the network. On any other runtime (docker, prime, ...) it is verifiers' ``null`` harness as is.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.runtimes.subprocess import SubprocessRuntime

__all__ = ["EmpaChatHarness"]


class _OwnPython:
    """A local runtime whose PEP 723 scripts run on this interpreter (see the module
    docstring); everything else is the runtime's."""

    def __init__(self, runtime: SubprocessRuntime) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(
        self, script: str | bytes, env: dict[str, str] | None = None, *, activate: bool = True
    ) -> list[str]:
        del env, activate  # no uv environment to build or activate
        data = script.encode() if isinstance(script, str) else script
        path = f"{self._runtime.scripts_dir}/{hashlib.sha256(data).hexdigest()}-empathos.py"
        await self._runtime.write(path, data)
        return [sys.executable, path]


class EmpaChatHarness(NullHarness):  # type: ignore[misc]  # verifiers is untyped
    """verifiers' ``null`` harness, without ``uv`` on the local runtime (module docstring)."""

    async def setup(self, runtime: Any) -> None:
        if not isinstance(runtime, SubprocessRuntime):
            await super().setup(runtime)

    async def launch(self, ctx: Any, trace: Any, runtime: Any, *args: Any, **kwargs: Any) -> Any:
        local = _OwnPython(runtime) if isinstance(runtime, SubprocessRuntime) else runtime
        return await super().launch(ctx, trace, local, *args, **kwargs)
