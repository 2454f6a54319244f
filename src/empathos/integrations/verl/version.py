"""The verl release the integration needs (0.9.1 or later), checked where verl is imported.

verl 0.9.1 added what the agent loop builds its tokens with (``ct_merge_context_msg`` of
``AgentLoopBase``); on 0.9.0 the first rollout would fail deep inside verl. :func:`require_verl`
fails at import instead, with one line naming the installed version and the fix.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from packaging.version import InvalidVersion, Version

from empathos.errors import MissingExtraError

__all__ = ["MIN_VERL", "require_verl"]

MIN_VERL = Version("0.9.1")


def require_verl(installed: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless verl >= :data:`MIN_VERL` is installed
    (``installed``: the version string to check, else the installed distribution's)."""
    if installed is None:
        try:
            installed = version("verl")
        except PackageNotFoundError:
            installed = "none"
    try:
        ok = Version(installed) >= MIN_VERL
    except InvalidVersion:
        ok = False
    if not ok:
        raise MissingExtraError(
            f"verl {installed} is installed; empathos's verl integration needs verl>={MIN_VERL} "
            f"(AgentLoopBase.ct_merge_context_msg): pip install 'verl=={MIN_VERL}'",
            field="verl",
        )
