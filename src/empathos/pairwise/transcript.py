"""Items from dialogue records, and the rule that truncates and renders a transcript.

Truncation treats both sides of a pair alike, and never depends on the other side: each
message keeps at most ``message_chars`` characters, and the dialogue keeps whole messages
from its start while the running total stays within ``dialogue_chars``; whatever is cut is
marked ``[...]``. The defaults (2,000 and 24,000 characters) keep two 30-turn EMPA
dialogues within a 32k-token judge context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from empathos.epm import TerminationKind
from empathos.pairwise.model import Item, TranscriptMessage
from empathos.records import DialogueRecord

__all__ = [
    "CUT",
    "Truncation",
    "item_of_record",
    "render_transcript",
    "seen_replies",
    "shown_messages",
]

CUT = "[...]"
_SPEAKERS = {"en": ("person", "supporter"), "zh": ("此人", "陪伴者")}


@dataclass(frozen=True, slots=True)
class Truncation:
    """The limits of the truncation rule (see the module docstring)."""

    message_chars: int = 2000
    dialogue_chars: int = 24000


def item_of_record(record: DialogueRecord, model: str, trial: int) -> Item | None:
    """The record's dialogue as an item (None: it ended in an error, or has no reply)."""
    if record.termination.kind is TerminationKind.ERROR:
        return None
    messages: list[TranscriptMessage] = []
    for turn in record.turns:
        messages.append(TranscriptMessage(role="user", content=turn.user))
        if turn.assistant:
            messages.append(TranscriptMessage(role="assistant", content=turn.assistant))
    if not any(m.role == "assistant" for m in messages):
        return None
    return Item(scenario_id=record.scenario_id, trial=trial, model=model, transcript=messages)


def shown_messages(
    messages: Sequence[TranscriptMessage],
    language: str,
    rule: Truncation = Truncation(),
    speakers: tuple[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The (role, text) of each message as ``rule`` lets the judge see it, speaker first
    (the last one :data:`CUT` alone, role "", when the dialogue is cut)."""
    person, supporter = speakers or _SPEAKERS.get(language, _SPEAKERS["en"])
    shown: list[tuple[str, str]] = []
    total = 0
    for m in messages:
        if m.role == "system":
            continue
        text = m.content.strip()
        if len(text) > rule.message_chars:
            text = text[: rule.message_chars].rstrip() + " " + CUT
        line = f"{person if m.role == 'user' else supporter}: {text}"
        if total + len(line) > rule.dialogue_chars:
            shown.append(("", CUT))
            break
        shown.append((m.role, line))
        total += len(line)
    return shown


def render_transcript(
    messages: Sequence[TranscriptMessage],
    language: str,
    rule: Truncation = Truncation(),
    speakers: tuple[str, str] | None = None,
) -> str:
    """The transcript as ``person: ...`` / ``supporter: ...`` lines (or ``speakers``),
    truncated by ``rule``."""
    return "\n".join(line for _, line in shown_messages(messages, language, rule, speakers))


def seen_replies(item: Item, language: str = "en", rule: Truncation = Truncation()) -> str:
    """The model's replies of ``item`` as the judge sees them under ``rule`` (cut where the
    rule cuts; the speaker names and the cut marks left out): what style control measures."""
    supporter = _SPEAKERS.get(language, _SPEAKERS["en"])[1]
    out = []
    for role, line in shown_messages(item.transcript, language, rule):
        if role == "assistant":
            text = line[len(supporter) + 2 :]
            out.append(text[: -len(CUT) - 1] if text.endswith(" " + CUT) else text)
    return "\n\n".join(out)
