"""Refine and validate: checks on one distilled scenario, and near-duplicates across a set.

Pure functions (no I/O). Errors reject the scenario (recorded with the reason); warnings are
kept in its provenance for a reviewer.

- **schema**: the scenario model itself (pydantic) before any of this runs;
- **one language**: every text field of 12+ letters is in the scenario's language;
- **length limits**: ``LENGTH_LIMITS`` characters per field (topic, trigger, others);
- **ages and timelines**: an age stated in the story or experience ("when she was 30",
  "12 years ago", "30岁那年", "12年前") may not exceed the persona's age;
- **one incident** (warning): topic and trigger share content words (or, in Chinese, character
  pairs) with the story stages;
- **priorities** (warning): the three C/A/P levels should not all be equal;
- **degenerate output** (:func:`degeneracy`, errors): most text fields repeat one value (a
  small model writing one name everywhere), the four story stages are one text, or a field
  copies the format's own descriptions (``format_texts``: the templates' instructions and the
  schemas' descriptions) instead of content;
- **near-duplicates** across the set: RapidFuzz's normalised Indel similarity
  (``fuzz.ratio``) over each scenario's topic, trigger, needs and stages; a later scenario at
  or above ``DUPLICATE_SIMILARITY`` (0-100) of an earlier one is dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from empathos.distill.formats import detect_language
from empathos.scenarios import Scenario

__all__ = [
    "DUPLICATE_SIMILARITY",
    "LENGTH_LIMITS",
    "CheckResult",
    "check_scenario",
    "degeneracy",
    "near_duplicates",
    "scenario_signature",
    "text_fields",
]

DUPLICATE_SIMILARITY = 85.0
LENGTH_LIMITS = {"persona.topic": 400, "persona.trigger": 600, "*": 1200}

_AGE_AT = re.compile(
    r"(?i:when (?:he|she|they|i) (?:was|were)|at (?:the )?age(?: of)?|aged|at)\s+(\d{1,3})\b"
    r"|(\d{1,3})\s*岁(?:时|那年|的时候)"
)
_YEARS_AGO = re.compile(r"(\d{1,3})\s+years? ago|(\d{1,3})\s*年前")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "was",
        "were",
        "be",
        "been",
        "her",
        "his",
        "their",
        "she",
        "he",
        "they",
        "it",
        "this",
        "that",
        "what",
        "who",
        "when",
        "then",
        "than",
        "into",
        "about",
        "after",
        "before",
        "over",
        "just",
        "not",
        "very",
        "so",
        "too",
        "had",
        "has",
        "have",
        "do",
        "did",
        "does",
        "can",
        "could",
        "would",
        "will",
        "my",
        "me",
        "our",
        "your",
        "them",
        "him",
        "as",
        "are",
        "one",
        "two",
        "three",
        "some",
        "all",
        "any",
        "more",
        "most",
    ]
)


@dataclass(frozen=True)
class CheckResult:
    """What the checks found: errors reject the scenario, warnings are recorded."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def text_fields(s: Scenario) -> list[tuple[str, str]]:
    """Every free-text field of the card and story as (path, text)."""
    p = s.persona
    out = [
        ("persona.traits.outer", p.traits.outer),
        ("persona.traits.inner", p.traits.inner),
        ("persona.needs.vent", p.needs.vent),
        ("persona.needs.hoped_for", p.needs.hoped_for),
        ("persona.needs.sensitivities", p.needs.sensitivities),
        ("persona.topic", p.topic),
        ("persona.trigger", p.trigger),
    ]
    for axis in ("cognitive", "affective", "proactive"):
        out.append((f"persona.priorities.{axis}.rationale", getattr(p.priorities, axis).rationale))
    out.extend((f"persona.experience.{k}", v) for k, v in p.experience.model_dump().items())
    for i, st in enumerate(s.story.stages, start=1):
        out.append((f"story.stages[{i}].title", st.title))
        out.append((f"story.stages[{i}].content", st.content))
    out.append(("story.outcome", s.story.outcome))
    out.append(("story.interlude", s.story.interlude))
    return out


def _letters(text: str) -> int:
    return sum(1 for ch in text if ch.isalpha())


def _terms(text: str, language: str) -> set[str]:
    if language == "zh":
        han = re.sub(r"[^\u4e00-\u9fff]", "", text)
        return {han[i : i + 2] for i in range(len(han) - 1)}
    words = re.findall(r"[a-z]+", text.lower())
    return {w for w in words if len(w) > 3 and w not in _STOP}


def _ages(text: str) -> list[int]:
    return [int(a or b) for a, b in _AGE_AT.findall(text)] + [
        int(a or b) for a, b in _YEARS_AGO.findall(text)
    ]


def check_scenario(s: Scenario) -> CheckResult:
    """Language, length, age/timeline errors and consistency warnings for one scenario."""
    errors: list[str] = []
    warnings: list[str] = []
    lang = s.labels.language
    fields = text_fields(s)
    for path, text in fields:
        if not text.strip() and path.startswith(("persona.needs", "persona.topic", "story.")):
            errors.append(f"{path}: empty")
        limit = LENGTH_LIMITS.get(path, LENGTH_LIMITS["*"])
        if len(text) > limit:
            errors.append(f"{path}: {len(text)} characters (limit {limit})")
        if _letters(text) >= 12 and detect_language(text) != lang:
            errors.append(f"{path}: not in the scenario's language ({lang})")
    age = s.persona.identity.age
    if age is not None:
        for path, text in fields:
            if path.startswith(("persona.experience", "story.", "persona.trigger")):
                for n in _ages(text):
                    if n > age:
                        errors.append(f"{path}: mentions {n} years but the persona is {age}")
    incident = _terms(s.persona.topic + " " + s.persona.trigger, lang)
    story = _terms(" ".join(st.content for st in s.story.stages), lang)
    if incident and story and not incident & story:
        warnings.append("topic and trigger share no content words with the story stages")
    pr = s.persona.priorities
    if pr.cognitive.level == pr.affective.level == pr.proactive.level:
        warnings.append("all three priorities have the same level")
    return CheckResult(errors=errors, warnings=warnings)


#: A field is a copy of a format text when their normalised similarity (RapidFuzz's
#: ``partial_ratio``, the best alignment of the field inside the text) reaches this, the field
#: is at least ``_COPY_MIN_CHARS`` long and not much longer than the text.
COPY_SIMILARITY = 90.0
_COPY_MIN_CHARS = {"en": 16, "zh": 6}


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _copies(text: str, phrases: Sequence[str], min_chars: int) -> str | None:
    """The format text ``text`` copies (None: none)."""
    if len(text) < min_chars:
        return None
    for phrase in phrases:
        if len(text) <= 1.25 * len(phrase) and fuzz.partial_ratio(text, phrase) >= COPY_SIMILARITY:
            return phrase
    return None


def degeneracy(s: Scenario, format_texts: Sequence[str] = ()) -> list[str]:
    """Why ``s`` is not a scenario but a model's failure to write one (empty: it is one).

    Three signs: half or more of the text fields (the name included) hold one value; the four
    story stages hold one text; a field copies one of ``format_texts`` (what the model was
    told about the format) instead of content."""
    fields = [("persona.identity.name", s.persona.identity.name), *text_fields(s)]
    original = {_norm(text): text.strip() for _, text in fields}
    values = [(path, _norm(text)) for path, text in fields]
    filled = [v for _, v in values if v]
    out: list[str] = []
    if filled:
        top, count = Counter(filled).most_common(1)[0]
        if count >= max(3, (len(filled) + 1) // 2):
            shown = original[top][:40]
            out.append(f"{count} of {len(filled)} text fields repeat one value ({shown!r})")
    stages = {_norm(st.content) for st in s.story.stages}
    if len(stages) == 1:
        out.append("the four story stages are one text")
    phrases = [p for p in (_norm(t) for t in format_texts) if p]
    min_chars = _COPY_MIN_CHARS.get(s.labels.language, 16)
    copied = [
        f"{path} ({original[text][:40]!r})"
        for path, text in values
        if _copies(text, phrases, min_chars) is not None
    ]
    if copied:
        shown = ", ".join(copied[:3]) + (f" and {len(copied) - 3} more" if len(copied) > 3 else "")
        out.append(f"copies the format's own descriptions instead of content: {shown}")
    return out


def scenario_signature(s: Scenario) -> str:
    """The text compared for near-duplicates: lower-cased, punctuation and spaces folded."""
    parts = [s.persona.topic, s.persona.trigger, s.persona.needs.vent]
    parts.extend(st.content for st in s.story.stages)
    text = " ".join(parts).lower()
    return " ".join(re.sub(r"[^\w]+", " ", text).split())


def near_duplicates(
    items: Sequence[tuple[str, str]], threshold: float = DUPLICATE_SIMILARITY
) -> dict[str, tuple[str, float]]:
    """For ``(id, signature)`` pairs in order: dropped id -> (kept id it duplicates, score).

    The first of a group of near-duplicates is kept; a later one is compared only with kept
    ones, so a chain a~b~c with a !~ c keeps a and c."""
    if len(items) < 2:
        return {}
    scores = cdist([t for _, t in items], [t for _, t in items], scorer=fuzz.ratio, workers=1)
    kept: list[int] = []
    dropped: dict[str, tuple[str, float]] = {}
    for i, (item_id, _) in enumerate(items):
        best = max(kept, key=lambda j: scores[i][j], default=None)
        if best is not None and scores[i][best] >= threshold:
            dropped[item_id] = (items[best][0], float(scores[i][best]))
        else:
            kept.append(i)
    return dropped
