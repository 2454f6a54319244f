"""The published EMPA layout, read as it is (through EMPATHOS_EMPA_SAMPLE; never copied)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from empathos.scenarios import Scenario, load_scenarios, select
from empathos.scenarios.model import Axis, PriorityLevel

_LEVEL = {"低": "low", "中": "medium", "高": "high"}
_DOMAIN = {
    "生活状况": "life_circumstances",
    "身心健康": "physical_mental_health",
    "休闲娱乐": "leisure",
    "观念认同": "values_beliefs",
    "人际关系": "interpersonal_relations",
    "生涯发展": "career",
}
_BAND = {"较易": "easy", "中等": "medium", "困难": "hard", "极难": "very_hard"}


@pytest.fixture(scope="module")
def published(empa_sample: Path) -> list[Scenario]:
    result = load_scenarios(empa_sample)
    assert [e.line() for e in result.errors] == []
    return result.scenarios


def test_reads_all_thirty_cases_with_stories(published: list[Scenario], empa_sample: Path) -> None:
    cards = sorted(p.stem for p in (empa_sample / "cases").glob("*.md"))
    assert len(cards) == 30
    assert [s.id for s in published] == cards
    stories = {
        e["剧本编号"]: e
        for e in json.loads((empa_sample / "character_stories.json").read_text(encoding="utf-8"))
    }
    for s in published:
        entry = stories[s.id]
        assert [st.title for st in s.story.stages] == [
            entry["故事的经过"][f"阶段{i}"]["标题"] for i in range(1, 5)
        ]
        assert s.story.outcome == entry["故事的结果"]
        assert s.story.interlude == entry["故事的插曲"]
        assert s.labels.language == "zh"
        assert s.source.kind == "published"


def test_raw_card_kept_verbatim(published: list[Scenario], empa_sample: Path) -> None:
    for s in published:
        assert s.raw_persona_prompt == (empa_sample / "cases" / f"{s.id}.md").read_text(
            encoding="utf-8"
        )


def test_threshold_parsed_for_every_card(published: list[Scenario]) -> None:
    for s in published:
        assert s.raw_persona_prompt is not None
        # An independent reading: the first 【X】 right after the threshold heading.
        tail = s.raw_persona_prompt.split("<empathy_threshold>", 1)[1]
        mark = re.search(r"【(.)】", tail)
        assert mark is not None
        assert s.persona.threshold.value == _LEVEL[mark.group(1)], s.id


def test_priorities_parsed_for_every_card(published: list[Scenario]) -> None:
    for s in published:
        pri = s.persona.priorities
        levels = [pri.level(a) for a in Axis]
        assert all(isinstance(lv, PriorityLevel) for lv in levels)
        assert all(getattr(pri, a.value).rationale for a in Axis), s.id
        if pri.order is not None:  # ranked forms: first is high, last is low
            assert pri.level(pri.order[0]) is PriorityLevel.HIGH
            assert pri.level(pri.order[2]) is PriorityLevel.LOW
    by_id = {s.id: s for s in published}
    # script_059 states an explicit ordering "认知共情 > 情感共情 > 动机共情".
    assert by_id["script_059"].persona.priorities.order == [
        Axis.COGNITIVE,
        Axis.AFFECTIVE,
        Axis.PROACTIVE,
    ]
    assert sum(1 for s in published if s.persona.priorities.order is None) >= 20


def test_identity_topic_and_experience(published: list[Scenario]) -> None:
    for s in published:
        p = s.persona
        assert p.identity.name and p.identity.gender and p.identity.age is not None, s.id
        assert p.traits.outer and p.traits.inner, s.id
        assert p.topic and "#" not in p.topic, s.id
        assert p.trigger, s.id
        assert p.needs.vent and p.needs.hoped_for, s.id
        exp = p.experience
        assert exp.childhood and exp.adolescence and exp.young_adulthood and exp.growth_arc, s.id


def test_labels_match_metadata_statistics(published: list[Scenario], empa_sample: Path) -> None:
    stats = json.loads((empa_sample / "case_metadata.json").read_text(encoding="utf-8"))[
        "statistics"
    ]
    labels = [s.resolved_labels() for s in published]
    assert Counter(lab.domain.value for lab in labels if lab.domain) == Counter(
        {_DOMAIN[k]: v for k, v in stats["category_distribution"].items()}
    )
    assert Counter(lab.difficulty.value for lab in labels if lab.difficulty) == Counter(
        {_BAND[k]: v for k, v in stats["difficulty_distribution"].items()}
    )
    assert Counter(lab.dominant_axis.key for lab in labels if lab.dominant_axis) == Counter(
        stats["axis_distribution"]
    )
    assert all(lab.p0_norm is not None for lab in labels)


def test_official_selection(published: list[Scenario], empa_sample: Path) -> None:
    official = (empa_sample / "official_cases.txt").read_text(encoding="utf-8").split()
    assert sorted(s.id for s in select(published, "official")) == sorted(official)
    assert len(select(published, "official", limit=2)) == 2


def test_broken_copy_reports_each_problem(empa_sample: Path, tmp_path: Path) -> None:
    root = tmp_path / "layout"
    shutil.copytree(empa_sample / "cases", root / "cases")
    stories = json.loads((empa_sample / "character_stories.json").read_text(encoding="utf-8"))
    cards = sorted((root / "cases").glob("*.md"))
    no_story, no_threshold = cards[0].stem, cards[1]
    kept = [e for e in stories if e["剧本编号"] != no_story]
    (root / "character_stories.json").write_text(
        json.dumps(kept, ensure_ascii=False), encoding="utf-8"
    )
    text = no_threshold.read_text(encoding="utf-8")
    no_threshold.write_text(
        re.sub(r"<empathy_threshold>.*?</empathy_threshold>", "", text, flags=re.S),
        encoding="utf-8",
    )
    result = load_scenarios(root)
    assert len(result.scenarios) == 28
    problems = {Path(e.file or "").stem: e for e in result.errors}
    assert set(problems) == {no_story, no_threshold.stem}
    assert "story" in problems[no_story].problem
    assert "empathy_threshold" in problems[no_threshold.stem].problem


def test_layout_without_cards_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "character_stories.json").write_text("[]", encoding="utf-8")
    result = load_scenarios(tmp_path)
    assert result.scenarios == []
    assert [e.problem for e in result.errors] == ["no persona cards (*.md) found"]


def test_unknown_metadata_label_is_reported(empa_sample: Path, tmp_path: Path) -> None:
    root = tmp_path / "layout"
    shutil.copytree(empa_sample / "cases", root / "cases")
    shutil.copy(empa_sample / "character_stories.json", root / "character_stories.json")
    meta = json.loads((empa_sample / "case_metadata.json").read_text(encoding="utf-8"))
    first = meta["sampled_cases"][0]
    first["category"] = "unheard-of"
    (root / "case_metadata.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    result = load_scenarios(root)
    assert len(result.scenarios) == 29
    [err] = result.errors
    assert err.file == str(root / "case_metadata.json")
    assert err.field == f"{first['script_id']}.category" and "unheard-of" in err.problem


def test_unreadable_stories_file_is_reported_not_raised(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "script_001.md").write_text("invented card without sections", encoding="utf-8")
    (tmp_path / "character_stories.json").write_text("{ not json", encoding="utf-8")
    result = load_scenarios(tmp_path)  # the loader's contract: never raises for bad content
    assert result.scenarios == []
    assert result.errors[0].file == str(tmp_path / "character_stories.json")
    assert "unreadable JSON" in result.errors[0].problem


def test_unreadable_official_list_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "script_001.md").write_text("invented card", encoding="utf-8")
    (tmp_path / "character_stories.json").write_text("[]", encoding="utf-8")
    (tmp_path / "official_cases.txt").write_bytes(b"script_001\n\xff\xfe\n")
    result = load_scenarios(tmp_path)
    assert any(
        e.file == str(tmp_path / "official_cases.txt") and "unreadable" in e.problem
        for e in result.errors
    )
