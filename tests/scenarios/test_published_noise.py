"""The published layout as it really is (issue 11, part 7): typing noise in labels, absent
optional fields. Works on copies of the published sample in tmp_path (never committed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from empathos.scenarios import Axis, Scenario, load_scenarios

CASE = "script_003"


def _copy(sample: Path, dest: Path) -> Path:
    shutil.copytree(sample / "cases", dest / "cases")
    for name in ("character_stories.json", "case_metadata.json", "official_cases.txt"):
        shutil.copy(sample / name, dest / name)
    return dest


def _by_id(path: Path) -> dict[str, Scenario]:
    result = load_scenarios(path)
    assert [e.line() for e in result.errors] == []
    return {s.id: s for s in result.scenarios}


def _summary(s: Scenario) -> tuple[object, ...]:
    p = s.persona
    pri = p.priorities
    lab = s.resolved_labels()
    return (
        p.identity.name,
        p.identity.gender,
        p.identity.age,
        p.threshold,
        [pri.level(a) for a in Axis],
        pri.order,
        bool(p.topic),
        p.experience.childhood,
        lab.domain,
        lab.difficulty,
        lab.dominant_axis,
    )


def test_labels_with_typing_noise_read_like_clean_ones(empa_sample: Path, tmp_path: Path) -> None:
    clean = _by_id(empa_sample)[CASE]
    root = _copy(empa_sample, tmp_path / "noisy")
    card = root / "cases" / f"{CASE}.md"
    text = card.read_text(encoding="utf-8")
    for label, noisy in (
        ("姓名：", "姓 名 ："),  # extra spaces
        ("年龄：", "年龄 :"),  # half-width colon after a space
        ("共情阈值【", "共情　阈值 【"),  # full-width space
        ("当下共情需求优先级", "当下共情-需求优先级"),  # stray hyphen
        ("认知共情", "认知-共情"),
        ("情感共情", "情感 共情"),
        ("动机共情", "动机－共情"),  # full-width hyphen
        ("童年经历", "童年 经历"),
    ):
        assert label in text, label
        text = text.replace(label, noisy)
    card.write_text(text, encoding="utf-8")
    meta_path = root / "case_metadata.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    for case in meta["sampled_cases"]:
        if case["script_id"] == CASE:
            case["category"] = " " + "-".join(case["category"]) + "　"
            case["difficulty"] = case["difficulty"][0] + " " + case["difficulty"][1:]
    meta_path.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    noisy = _by_id(root)[CASE]
    assert _summary(noisy) == _summary(clean)
    assert noisy.raw_persona_prompt == text  # the card itself stays verbatim


def _drop(text: str, pattern: str) -> str:
    out, n = re.subn(pattern, "", text, flags=re.S if "<" in pattern else re.M)
    assert n, pattern
    return out


def test_absent_optional_fields_are_warnings_with_defaults(
    empa_sample: Path, tmp_path: Path
) -> None:
    root = _copy(empa_sample, tmp_path / "partial")
    card = root / "cases" / f"{CASE}.md"
    text = card.read_text(encoding="utf-8")
    text = _drop(text, r"<experience>.*?</experience>")
    text = _drop(text, r"^性别：.*$")
    text = _drop(text, r"^姓名：.*$")
    card.write_text(text, encoding="utf-8")
    result = load_scenarios(root)
    assert [e.line() for e in result.errors] == []
    case = {s.id: s for s in result.scenarios}[CASE]
    assert case.persona.experience.childhood == "" and case.persona.identity.gender == ""
    assert case.persona.identity.name == CASE
    lines = [w.line() for w in result.warnings]
    assert f"{card}: <experience>: section missing or empty: its fields take their defaults" in (
        lines
    )
    assert any(ln.startswith(f"{card}: identity.name:") for ln in lines)
    proc = subprocess.run(
        [sys.executable, "-m", "empathos", "scenarios", "check", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout
    assert f"warning: {card}: <experience>" in proc.stdout
    assert "scenarios read: 30, errors: 0, warnings: 2" in proc.stdout


@pytest.mark.parametrize(
    ("pattern", "field"),
    [
        (r"共情阈值【[低中高]】", "<empathy_threshold>"),
        (r"当下共情需求优先级", "<psychological_profile>"),
    ],
)
def test_a_field_empathos_needs_is_still_an_error(
    empa_sample: Path, tmp_path: Path, pattern: str, field: str
) -> None:
    root = _copy(empa_sample, tmp_path / "broken")
    card = root / "cases" / f"{CASE}.md"
    card.write_text(_drop(card.read_text(encoding="utf-8"), pattern), encoding="utf-8")
    result = load_scenarios(root)
    assert CASE not in {s.id for s in result.scenarios}
    assert any(e.line().startswith(f"{card}: {CASE}: {field}") for e in result.errors)
