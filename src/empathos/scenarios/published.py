"""Read the published EMPA layout as it is.

Layout (a directory): ``cases/script_NNN.md`` persona cards (Chinese markdown with XML-like
sections), ``character_stories.json`` (hidden stories keyed in Chinese), optional
``case_metadata.json`` (domain, difficulty, dominant axis, distance) and optional
``official_cases.txt``. The card text is kept verbatim as ``raw_persona_prompt``; the
structured fields are parsed out of it for stratification and for the judge's profile.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from empathos.errors import ScenarioError
from empathos.scenarios.model import (
    Axis,
    DifficultyBand,
    Domain,
    PriorityLevel,
    Scenario,
    Threshold,
)
from empathos.scenarios.validation import errors_from_validation

__all__ = [
    "OPTIONAL_CARD_DEFAULTS",
    "is_published_layout",
    "label_pattern",
    "load_published",
    "normalise_label",
    "parse_card",
    "parse_priorities",
]

LICENCE = "CC BY-NC 4.0 (EMPA release)"
_DOMAINS = {
    "生活状况": Domain.LIFE_CIRCUMSTANCES,
    "身心健康": Domain.HEALTH,
    "休闲娱乐": Domain.LEISURE,
    "观念认同": Domain.VALUES,
    "人际关系": Domain.RELATIONSHIPS,
    "生涯发展": Domain.CAREER,
}
_BANDS = {
    "较易": DifficultyBand.EASY,
    "简单": DifficultyBand.EASY,
    "中等": DifficultyBand.MEDIUM,
    "困难": DifficultyBand.HARD,
    "极难": DifficultyBand.VERY_HARD,
}
_AXES = {"C": Axis.COGNITIVE, "A": Axis.AFFECTIVE, "P": Axis.PROACTIVE}
_THRESHOLDS = {"低": Threshold.LOW, "中": Threshold.MEDIUM, "高": Threshold.HIGH}
_PRIORITY_NAMES = {
    "认知共情": Axis.COGNITIVE,
    "情感共情": Axis.AFFECTIVE,
    "动机共情": Axis.PROACTIVE,
}
# An explicit level right after "X共情：", e.g. "[高优先级", "【中】", "[优先级：低]", "最高"
_LEVEL_RE = re.compile(r"^\s*[\[【(（]?\s*(?:优先级\s*[：:]?\s*)?(最高|极高|最低|中等|高|中|低)")
_LEVEL_WORDS = {
    "最高": PriorityLevel.HIGH,
    "极高": PriorityLevel.HIGH,
    "高": PriorityLevel.HIGH,
    "中等": PriorityLevel.MEDIUM,
    "中": PriorityLevel.MEDIUM,
    "最低": PriorityLevel.LOW,
    "低": PriorityLevel.LOW,
}
_RANKS = (PriorityLevel.HIGH, PriorityLevel.MEDIUM, PriorityLevel.LOW)


# Typing noise found inside labels of real cards: spaces (full-width too), stray hyphens and
# dashes, underscores, middle dots. Labels are matched with any of it between characters.
_NOISE = r"[\s\-\u2010-\u2015\uff0d_\u00b7\u30fb]*"
_COLON = r"[：:\ufe55\ufe13]"


def label_pattern(label: str) -> str:
    """A regex matching ``label`` with typing noise between its characters."""
    return _NOISE.join(re.escape(ch) for ch in label)


def normalise_label(text: str) -> str:
    """A metadata value without typing noise: NFKC (full-width forms), no spaces or dashes."""
    return re.sub(_NOISE, "", unicodedata.normalize("NFKC", text)).strip()


def is_published_layout(path: Path) -> bool:
    """True when ``path`` is a directory in the published EMPA layout."""
    if not path.is_dir():
        return False
    cases = path / "cases"
    return (path / "character_stories.json").is_file() or (
        cases.is_dir() and any(cases.glob("script_*.md"))
    )


def _section(text: str, tag: str) -> str:
    match = re.search(rf"[<＜]\s*{tag}\s*[>＞](.*?)[<＜]\s*/\s*{tag}\s*[>＞]", text, flags=re.S)
    return match.group(1) if match else ""


def _value(text: str, key: str) -> str:
    """The rest of the line after ``key：`` (an optional parenthetical before the colon)."""
    match = re.search(
        rf"{label_pattern(key)}(?:[（(][^）)\n]*[）)])?[ \t\u3000]*{_COLON}[ \t\u3000]*(.*)", text
    )
    return match.group(1).strip() if match else ""


def _after_heading(text: str, heading: str) -> str:
    """The text under a markdown heading, up to the next heading."""
    match = re.search(
        rf"^\s*#+\s*{label_pattern(heading)}\s*$(.*?)(?=^\s*#+\s|\Z)", text, flags=re.S | re.M
    )
    return (
        " ".join(line.strip() for line in match.group(1).splitlines() if line.strip())
        if match
        else ""
    )


def parse_priorities(block: str) -> dict[str, Any]:
    """C/A/P priorities from the card's priority block, in any of the release's forms.

    Forms seen: one line per axis with an explicit level ("情感共情：[高优先级] ..."), numbered
    lines or an inline list ordered by importance ("1.情感共情（最优先…）；2.…"), and an
    ordering ("认知共情 > 情感共情 > 动机共情"). Without explicit levels for all three axes,
    the order of appearance ranks them high / medium / low.
    """
    found: list[tuple[int, int, Axis]] = []
    for name, axis in _PRIORITY_NAMES.items():
        hit = re.search(label_pattern(name), block)
        if hit is None:
            raise ValueError(f"priority of {name} ({axis.value}) not found")
        found.append((hit.start(), hit.end(), axis))
    found.sort()
    starts = [pos for pos, _, _ in found] + [len(block)]
    out: dict[str, Any] = {}
    explicit = True
    for i, (_, end, axis) in enumerate(found):
        segment = block[end : starts[i + 1]].lstrip("：: \u3000")
        match = _LEVEL_RE.match(segment)
        rationale = re.sub(r"\s+", " ", segment).strip(" ;；>。.\n")
        if not rationale:  # an ordering ("C > A > P。...") shares one explanation
            rationale = re.sub(r"\s+", " ", block).strip(" ：:\n")
        if match:
            level = _LEVEL_WORDS[match.group(1)]
        else:
            explicit = False
            level = _RANKS[i]
        out[axis.value] = {"level": level.value, "rationale": rationale}
    if not explicit:
        for rank, (_, _, axis) in enumerate(found):
            out[axis.value]["level"] = _RANKS[rank].value
        out["order"] = [axis.value for _, _, axis in found]
    return out


#: Defaults of the card fields empathos can do without (the release reads the card verbatim
#: as the user's prompt and never needs them parsed): a missing one is a warning, not an error.
OPTIONAL_CARD_DEFAULTS: dict[str, str] = {
    "identity.name": "the case id",
    "identity.gender": "'' (unknown)",
    "identity.age": "none (unknown)",
    "traits.outer / traits.inner": "''",
    "needs.vent / needs.hoped_for / needs.sensitivities": "''",
    "experience.*": "'' (a missing <experience> section leaves all of them empty)",
    "trigger": "''",
}


def parse_card(
    text: str, *, case_id: str = "", warnings: list[tuple[str, str]] | None = None
) -> dict[str, Any]:
    """The structured persona fields of one published card.

    Raises ValueError naming a field when a field empathos needs is missing (the
    <empathy_threshold> level, the priority block of <psychological_profile>, the chat topic).
    A missing field of :data:`OPTIONAL_CARD_DEFAULTS` takes its default and, when
    ``warnings`` is given, adds ``(field, problem)`` to it.
    """
    notes = warnings if warnings is not None else []
    info, threshold_text, profile, experience, scenario = _card_sections(text, notes)
    level = re.search(
        rf"{label_pattern('共情阈值')}[\s\u3000]*[【\[［]\s*(低|中|高)\s*[】\]］]", threshold_text
    )
    if level is None:
        raise ValueError("<empathy_threshold>: no level 【低|中|高】 found")
    prio = re.search(label_pattern("当下共情需求优先级"), profile)
    if prio is None:
        raise ValueError("<psychological_profile>: priority block 当下共情需求优先级 not found")
    age_text = _value(info, "年龄")
    age_match = re.search(r"\d+", unicodedata.normalize("NFKC", age_text))
    name = _value(info, "姓名")
    if info.strip() and not name:
        notes.append(("identity.name", "姓名 not found: the case id is used"))
    return {
        "identity": {
            "name": name or case_id or "unknown",
            "gender": _value(info, "性别"),
            "age": int(age_match.group()) if age_match else None,
        },
        "traits": {"outer": _value(info, "社交性格"), "inner": _value(info, "内核性格")},
        "threshold": _THRESHOLDS[level.group(1)].value,
        "needs": {
            "vent": _value(profile, "想要找人倾诉的想法与内容"),
            "hoped_for": _value(profile, "倾诉中想要获得的共情点"),
            "sensitivities": _value(profile, "人物共情阈值"),
        },
        "priorities": parse_priorities(profile[prio.end() :]),
        "experience": _experience(experience),
        "topic": _after_heading(profile, "聊天话题"),
        "trigger": _value(scenario, "故事的起因"),
    }


def _card_sections(text: str, notes: list[tuple[str, str]]) -> tuple[str, str, str, str, str]:
    """The card's sections: character info, empathy threshold, psychological profile,
    experience, scenario. The threshold and the profile are required (ValueError); a missing
    character info or experience is noted in ``notes`` (its fields take their defaults)."""
    info = _section(text, "character_info")
    threshold_text = _section(text, "empathy_threshold")
    profile = _section(text, "psychological_profile")
    experience = _section(text, "experience")
    for tag, body in (("empathy_threshold", threshold_text), ("psychological_profile", profile)):
        if not body.strip():
            raise ValueError(f"<{tag}>: section missing or empty")
    for tag, body in (("character_info", info), ("experience", experience)):
        if not body.strip():
            notes.append((f"<{tag}>", "section missing or empty: its fields take their defaults"))
    return info, threshold_text, profile, experience, _section(text, "scenario")


def _experience(experience: str) -> dict[str, str]:
    return {
        "childhood": _value(experience, "童年经历"),
        "adolescence": _value(experience, "少年经历"),
        "young_adulthood": _value(experience, "青年经历"),
        "growth_arc": _value(experience, "隐形成长主线脉络"),
        "current_situation": _value(experience, "现在的情况"),
        "main_goal": _value(experience, "现在的人生主线目标"),
        "vision": _value(experience, "现在的人生愿景与动力"),
    }


def _story(entry: dict[str, Any]) -> dict[str, Any]:
    course = entry.get("故事的经过")
    if not isinstance(course, dict):
        raise ValueError("故事的经过: missing or not an object")
    stages = []
    for key in sorted(course, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        stage = course[key]
        if not isinstance(stage, dict):
            raise ValueError(f"故事的经过.{key}: not an object")
        stages.append({"title": stage.get("标题", ""), "content": stage.get("内容", "")})
    return {
        "stages": stages,
        "outcome": entry.get("故事的结果", ""),
        "interlude": entry.get("故事的插曲", ""),
    }


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"unreadable JSON: {exc}", file=path) from None


def _metadata(root: Path) -> dict[str, dict[str, Any]]:
    path = root / "case_metadata.json"
    if not path.is_file():
        return {}
    data = _read_json(path)
    cases = data.get("sampled_cases", []) if isinstance(data, dict) else data
    if not isinstance(cases, list):
        raise ScenarioError("expected a list of cases", file=path, field="sampled_cases")
    out: dict[str, dict[str, Any]] = {}
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or "script_id" not in case:
            raise ScenarioError("case without script_id", file=path, field=f"sampled_cases[{i}]")
        out[str(case["script_id"])] = case
    return out


def _labels(meta: dict[str, Any], file: Path) -> dict[str, Any]:
    labels: dict[str, Any] = {"language": "zh"}
    for key, table, target in (
        ("category", _DOMAINS, "domain"),
        ("difficulty", _BANDS, "difficulty"),
        ("dominant_axis", _AXES, "dominant_axis"),
    ):
        value = meta.get(key)
        if value is None:
            continue
        clean = normalise_label(str(value))
        if clean not in table:
            raise ScenarioError(
                f"unknown {key} {value!r}", file=file, field=f"{meta.get('script_id')}.{key}"
            )
        labels[target] = table[clean].value
    if isinstance(meta.get("distance"), int | float):
        labels["distance"] = float(meta["distance"])
    return labels


def _stories(root: Path, errors: list[ScenarioError]) -> dict[str, dict[str, Any]]:
    path = root / "character_stories.json"
    if not path.is_file():
        errors.append(ScenarioError("missing character_stories.json", file=path))
        return {}
    try:
        data = _read_json(path)
    except ScenarioError as exc:  # reported; every case then lacks its story
        errors.append(exc)
        return {}
    if not isinstance(data, list):
        errors.append(ScenarioError("expected a list of stories", file=path))
        return {}
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(data):
        sid = entry.get("剧本编号") if isinstance(entry, dict) else None
        if not sid:
            errors.append(ScenarioError("entry without 剧本编号", file=path, field=f"[{i}]"))
            continue
        try:
            out[str(sid)] = _story(entry)
        except ValueError as exc:
            errors.append(ScenarioError(str(exc), file=path, field=f"{sid}"))
    return out


def _official(root: Path, errors: list[ScenarioError]) -> set[str]:
    """The ids listed in official_cases.txt (none when it is absent or unreadable)."""
    path = root / "official_cases.txt"
    if not path.is_file():
        return set()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(ScenarioError(f"unreadable: {exc}", file=path))
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def load_published(
    root: Path, warnings: list[ScenarioError] | None = None
) -> tuple[list[Scenario], list[ScenarioError]]:
    """Every case of a published-layout directory; bad cases become errors, never exceptions.

    A missing optional card field (:data:`OPTIONAL_CARD_DEFAULTS`) is appended to
    ``warnings`` (when given) and the case is still read with the field's default."""
    notes = warnings if warnings is not None else []
    errors: list[ScenarioError] = []
    try:
        meta = _metadata(root)
    except ScenarioError as exc:
        errors.append(exc)
        meta = {}
    stories = _stories(root, errors)
    official = _official(root, errors)
    cards_dir = root / "cases" if (root / "cases").is_dir() else root
    scenarios: list[Scenario] = []
    cards = sorted(cards_dir.glob("*.md"))
    if not cards:
        errors.append(ScenarioError("no persona cards (*.md) found", file=cards_dir))
    for card_path in cards:
        sid = card_path.stem
        try:
            scenarios.append(_one_case(card_path, stories, (meta, root), official, notes))
        except ScenarioError as exc:
            errors.append(exc)
        except ValidationError as exc:
            errors.extend(errors_from_validation(exc, card_path))
        except ValueError as exc:
            errors.append(ScenarioError(str(exc), file=card_path, field=sid))
    return scenarios, errors


def _one_case(
    card_path: Path,
    stories: dict[str, dict[str, Any]],
    meta_at: tuple[dict[str, dict[str, Any]], Path],
    official: set[str],
    warnings: list[ScenarioError],
) -> Scenario:
    sid = card_path.stem
    meta, root = meta_at
    try:
        text = card_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"unreadable: {exc}", file=card_path) from None
    if sid not in stories:
        raise ScenarioError("no story in character_stories.json", file=card_path, field="剧本编号")
    found: list[tuple[str, str]] = []
    persona = parse_card(text, case_id=sid, warnings=found)
    warnings.extend(ScenarioError(problem, file=card_path, field=f) for f, problem in found)
    data = {
        "id": sid,
        "persona": persona,
        "story": stories[sid],
        "labels": _labels(meta.get(sid, {}), root / "case_metadata.json"),
        "raw_persona_prompt": text,
        "source": {
            "kind": "published",
            "path": str(card_path),
            "official": sid in official,
            "licence": LICENCE,
        },
    }
    return Scenario.model_validate(data)
