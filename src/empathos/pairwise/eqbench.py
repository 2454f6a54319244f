"""EQ-Bench 3's pairwise pass on our engine: the benchmark's prompt, read from the user's copy.

The user's copy of the benchmark's ``data/`` folder holds the pairwise prompts
(``pairwise_prompt_eqbench3.txt``; ``pairwise_prompt_eqbench3_analysis.txt`` for the
analysis tasks, ids 401-420), the scenario notes (``scenario_notes.txt``: a ``# <id>``
line, then the notes) and the scenarios (``scenario_prompts.txt``). Nothing of them is in
this repository: they are read at run time. The prompt's slots are filled by plain
replacement, as the benchmark fills them (:mod:`empathos.pairwise.eqbench_sections`):
``{conversation_history_A}`` / ``_B`` (the conversation as the benchmark shows it: each
reply rebuilt from its sections cut at 2,200 / 1,600 / 1,600 characters),
``{debrief_A}`` / ``_B`` (without a think block, ``*`` and ``#``, cut at 4,000),
``{scenario_notes}``, ``{scenario_description}``; in the analysis prompt ``{response_A}``
/ ``{response_B}`` (each side's first reply, without ``*``, ``#`` and a think block, cut at
6,000) and ``{transcript_being_analysed}`` (the scenario's first scripted prompt, as
written in the scenario file; the first user message when the copy has no scenario
file). The two respondent codes the prompt uses are the first two distinct ``<letter><4
digits>`` codes in it, the first naming dialogue A (shown first). The judge answers one
JSON object whose values read ``<code><1-5 plus signs>``; each such key is an aspect
(``overall_eq`` is stored as ``overall``), the code its winner and the plus signs its
margin; the judgement also keeps the benchmark's plus counts of the whole reply
(:mod:`empathos.pairwise.eqbench_plus`), which its TrueSkill reads.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from empathos.errors import ConfigError, ModelCallError
from empathos.llm import ModelClient, RawReply, record_of
from empathos.llm.structured import OutputInvalid, parse_json
from empathos.pairwise.eqbench_outcomes import PlusRule
from empathos.pairwise.eqbench_plus import plus_counts
from empathos.pairwise.eqbench_scenarios import scenario_prompts
from empathos.pairwise.eqbench_sections import (
    ANALYSIS_LIMIT,
    DEBRIEF_LIMIT,
    cut,
    demarked,
    kind_of,
    pairwise_history,
    shown_reply,
    without_think,
)
from empathos.pairwise.model import Item, Judgement, Pick

__all__ = ["EqbenchJudge", "EqbenchPrompts", "parse_picks", "reply_plus"]

PROMPT = "pairwise_prompt_eqbench3.txt"
ANALYSIS_PROMPT = "pairwise_prompt_eqbench3_analysis.txt"
NOTES = "scenario_notes.txt"
SCENARIOS = "scenario_prompts.txt"
NO_NOTES = "[no notes on this scenario]"
NO_DEBRIEF = "[no debrief given]"
SLOTS = ("conversation_history_A", "debrief_A", "conversation_history_B", "debrief_B")
ANALYSIS_SLOTS = ("response_A", "response_B")
_CODE = re.compile(r"\b([A-Z]\d{4})\b")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"unreadable ({exc.strerror})", file=path, field="--eqbench3") from None


def _found_codes(text: str) -> list[str]:
    """The distinct respondent codes of a prompt, in order of first use."""
    return list(dict.fromkeys(_CODE.findall(text)))


def _codes(text: str, path: Path, slots: tuple[str, ...] = SLOTS) -> tuple[str, str]:
    found = _found_codes(text)
    missing = [s for s in (*slots, "scenario_notes") if "{" + s + "}" not in text]
    if len(found) < 2 or missing:
        why = f"no slot {{{missing[0]}}}" if missing else "fewer than two respondent codes"
        raise ConfigError(f"not an EQ-Bench 3 pairwise prompt ({why})", file=path)
    return found[0], found[1]


def _notes(text: str) -> dict[str, str]:
    """Scenario id -> notes, read as the benchmark reads them: a line starting ``# `` opens
    the notes of the id it names (the line without its ``#`` and spaces); empty notes are
    left out."""
    notes: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("# "):
            current = notes.setdefault(line.strip("# "), [])
        elif current is not None:
            current.append(line)
    joined = {k: "\n".join(v).strip() for k, v in notes.items()}
    return {k: v for k, v in joined.items() if v}


@dataclass(frozen=True)
class EqbenchPrompts:
    """The pairwise prompts and scenario notes of the user's copy of the benchmark."""

    folder: Path
    prompt: str
    analysis: str
    notes: dict[str, str] = field(default_factory=dict)
    scenarios: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> EqbenchPrompts:
        """Read ``folder`` (the benchmark's ``data/`` or the folder above it)."""
        if (folder / "data" / PROMPT).is_file():
            folder = folder / "data"
        prompt = _read(folder / PROMPT)
        analysis_path = folder / ANALYSIS_PROMPT
        analysis = _read(analysis_path) if analysis_path.is_file() else prompt
        _codes(prompt, folder / PROMPT)
        _codes(analysis, analysis_path, ANALYSIS_SLOTS if analysis != prompt else SLOTS)
        notes = _notes(_read(folder / NOTES)) if (folder / NOTES).is_file() else {}
        has_scenarios = (folder / SCENARIOS).is_file()
        scenarios = scenario_prompts(_read(folder / SCENARIOS)) if has_scenarios else {}
        return cls(folder, prompt, analysis, notes, scenarios)

    def for_scenario(self, scenario_id: str) -> str:
        """The prompt of a scenario: the analysis one for ids 401-420."""
        return self.analysis if scenario_id.isdigit() and 401 <= int(scenario_id) <= 420 else (
            self.prompt
        )  # fmt: skip


def _first_said(item: Item, role: str) -> str:
    return next((m.content for m in item.transcript if m.role == role), "")


def _debrief(text: str) -> str:
    shown = demarked(without_think(text or NO_DEBRIEF))
    return cut(shown, DEBRIEF_LIMIT) if text else shown


def _analysed(item: Item) -> str:
    return cut(without_think(demarked(_first_said(item, "assistant"))), ANALYSIS_LIMIT)


def _history(item: Item) -> str:
    pairs = [(m.role, m.content) for m in item.transcript if m.role != "system"]
    return pairwise_history(pairs, kind_of(item.scenario_id), item.sectioned)


def parse_picks(content: str | None, codes: tuple[str, str]) -> dict[str, Pick]:
    """The aspects of a reply: each value ``<code><plus signs>`` (OutputInvalid: none)."""
    value, _ = parse_json(content or "")
    if not isinstance(value, dict):
        raise OutputInvalid("the reply is not a JSON object", content or "")
    pattern = re.compile(rf"^\s*({re.escape(codes[0])}|{re.escape(codes[1])})\s*(\++)")
    picks = {}
    for key, text in value.items():
        m = pattern.match(text) if isinstance(text, str) else None
        if m:
            name = "overall" if key == "overall_eq" else str(key)
            winner = "first" if m.group(1) == codes[0] else "second"
            picks[name] = Pick(winner=winner, margin=min(len(m.group(2)), 5))
    if "overall" not in picks:
        raise OutputInvalid(f"no overall_eq of the form {codes[0]}++ or {codes[1]}+++", "")
    return picks


def reply_plus(content: str | None, codes: tuple[str, str]) -> tuple[float, float]:
    """The benchmark's plus counts of a reply (first shown, second shown)."""
    value, _ = parse_json(content or "")
    first, second = plus_counts(value, codes) if isinstance(value, dict) else (0, 0)
    return float(first), float(second)


@dataclass
class EqbenchJudge:
    """The benchmark's pairwise judge over ``client``."""

    client: ModelClient
    name: str
    prompts: EqbenchPrompts

    @property
    def fingerprint(self) -> str:
        """The user's prompts' content hash and the benchmark's truncation."""
        both = (self.prompts.prompt + self.prompts.analysis).encode("utf-8")
        rule = "eqbench3 sections 2200/1600/1600, raw 4000, debrief 4000, analysis 6000"
        return f"user:{PROMPT} {hashlib.sha256(both).hexdigest()[:12]}; truncation {rule}"

    @property
    def outcome_rule(self) -> PlusRule:
        """The benchmark's plus-count fractions as the pairs' outcomes
        (:func:`~empathos.pairwise.eqbench_outcomes.plus_rule`)."""
        return PlusRule()

    def seen(self, item: Item) -> str:
        """The model's text of ``item`` as this judge's prompt shows it, for style control:
        each reply of the conversation (rebuilt from its cut sections, or cut raw), the
        debrief and the analysis response, each where the scenario's prompt has its slot."""
        template = self.prompts.for_scenario(item.scenario_id)
        kind = kind_of(item.scenario_id)
        parts: list[str] = []
        if "{conversation_history_A}" in template:
            parts += [
                shown_reply(m.content, kind, item.sectioned)
                for m in item.transcript
                if m.role == "assistant"
            ]
        if "{debrief_A}" in template and item.debrief:
            parts.append(_debrief(item.debrief))
        if "{response_A}" in template:
            parts.append(_analysed(item))
        return "\n\n".join(parts)

    async def __call__(self, first: Item, second: Item) -> Judgement:
        template = self.prompts.for_scenario(first.scenario_id)
        found = _found_codes(template)  # checked when the prompts were loaded
        codes = (found[0], found[1])
        version = hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]
        text = template
        prompts = self.prompts.scenarios.get(first.scenario_id)
        scenario = prompts[0] if prompts else _first_said(first, "user")
        slots = {
            "scenario_description": scenario,
            "scenario_notes": self.prompts.notes.get(first.scenario_id, NO_NOTES),
            "conversation_history_A": _history(first),
            "conversation_history_B": _history(second),
            "debrief_A": _debrief(first.debrief),
            "debrief_B": _debrief(second.debrief),
            "transcript_being_analysed": scenario.strip(),
            "response_A": _analysed(first),
            "response_B": _analysed(second),
        }
        for slot, value in slots.items():
            text = text.replace("{" + slot + "}", value)
        base = Judgement(
            scenario_id=first.scenario_id, trial=first.trial, first=first.model,
            second=second.model, judge=self.name, template_id=f"user:{PROMPT}",
            template_version=version,
        )  # fmt: skip

        def accept(reply: RawReply) -> tuple[RawReply, bool]:
            parse_picks(reply.content, codes)
            return reply, False

        try:
            reply, rec = await self.client.complete(
                [{"role": "user", "content": text}], json_mode=True, accept=accept
            )
        except ModelCallError as exc:
            return base.model_copy(update={"error": exc.line(), "call": record_of(exc)})
        picks = parse_picks(reply.content, codes)
        plus = reply_plus(reply.content, codes)
        return base.model_copy(update={"picks": picks, "plus": plus, "call": rec})
