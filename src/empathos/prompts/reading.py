"""Reading a rendered prompt back: what a scripted judge needs to find in what it was sent.

Scripted handlers (tests, the CPU smoke run's toy judges) see only the prompt's text. The
speaker labels and separators they must look for are this package's own fragments, so the
reading follows the templates in every language and style, and a changed label cannot leave
a handler silently reading nothing.
"""

from __future__ import annotations

from empathos.prompts.render import LANGUAGES, fragments

__all__ = ["rated_reply"]


def _markers() -> list[str]:
    """The start of a supporter line in a judge's transcript, per language."""
    out = []
    for language in LANGUAGES:
        frags = fragments(language)
        out.append("\n" + frags["speaker.supporter"] + frags["sep"])
    return out


def rated_reply(prompt: str) -> str:
    """The supporter's last reply in a rendered MDEP judge prompt (the one the window ends
    with), in any language and style; '' when the prompt holds no supporter line.

    The window comes after the history and nothing after it starts a line with the
    supporter's label, so the last such line is the rated reply; it runs to the end of the
    window (a blank line or the next ``#`` heading)."""
    at, marker = max((prompt.rfind(m), m) for m in _markers())
    if at < 0:
        return ""
    rest = prompt[at + len(marker) :]
    ends = [i for i in (rest.find("\n\n"), rest.find("\n# ")) if i >= 0]
    return rest[: min(ends, default=len(rest))].strip()
