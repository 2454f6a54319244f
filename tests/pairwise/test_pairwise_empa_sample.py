"""On the published EMPA sample (read through EMPATHOS_EMPA_SAMPLE): a judge that prefers the
dialogue with the better final distance rates the models in the order of their EPM-Q."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pairwise_helpers import JudgeServer, empathos, judge_flags

from empathos.epm import EPMConfig
from empathos.records import DialogueRecord, load_records
from empathos.scoring.dialogues import dialogue_scores

SUPPORTER = "陪伴者: "


def _final_distance(record: DialogueRecord) -> float:
    last = record.evaluations[-1].state if record.evaluations else record.initial_state
    return last.distance


def _opening(section: str) -> str:
    """The supporter's first line in a rendered dialogue (its first 60 characters)."""
    line = next(x for x in section.splitlines() if x.startswith(SUPPORTER))
    return line[len(SUPPORTER) :][:60].strip()


def test_a_final_distance_judge_orders_the_models_as_their_epmq(
    empa_sample: Path, tmp_path: Path
) -> None:
    models = sorted(p for p in (empa_sample / "results").iterdir() if p.is_dir())
    distance: dict[str, float] = {}
    epmq: dict[str, float] = {}
    for folder in models:
        loaded, _ = load_records([folder])
        for x in loaded:
            first_line = x.record.turns[0].assistant.strip().splitlines()[0]
            distance[first_line[:60].strip()] = _final_distance(x.record)
        scores = dialogue_scores([x.record for x in loaded], EPMConfig())
        epmq[loaded[0].model_name] = float(np.nanmean(scores.epmq))

    def closer(first: str, second: str) -> str:
        a, b = distance[_opening(first)], distance[_opening(second)]
        return "second" if b < a else "first"  # equal: the position decides (a tie)

    out = tmp_path / "pw"
    with JudgeServer(closer) as server:
        res = empathos(
            "compare", "--pairwise", *map(str, models), "--out", str(out), *judge_flags(server.url),
            "--format", "json", "--bootstrap", "50", "--concurrency", "8",
        )  # fmt: skip
        assert res.exit_code == 0, res.stderr
        first_prompt = server.requests[0]["messages"]
    result = json.loads(res.stdout)
    assert [r["model"] for r in result["ratings"]] == sorted(epmq, key=lambda m: -epmq[m])
    assert result["pairs"] == 3 * 30 and result["scenarios"] == 30
    # the judge saw the scenario's profile, in the scenario's language, and our template
    assert first_prompt[0]["content"].startswith("你是严谨的评估者")
    assert "(no profile given)" not in first_prompt[-1]["content"]
