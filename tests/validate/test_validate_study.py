"""The study end to end (Python API) with scripted judges of known behaviour."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from validate_helpers import HANDLERS

from empathos.llm.roles import RoleEndpoint
from empathos.records import load_records
from empathos.scenarios import load_builtin, load_scenarios
from empathos.scoring.dialogues import dialogue_scores
from empathos.validate import JudgeSpec, StudyOptions, run_validation
from empathos.validate.points import eval_points
from empathos.validate.scorers import epm_delta
from empathos.validate.study import rescore_epmq


def judge(handler: str, model: str | None = None) -> JudgeSpec:
    spec = f"{HANDLERS}:{handler}"
    return JudgeSpec(RoleEndpoint(kind="scripted", model=model or handler, handler=spec))


def study(
    paths: list[Path],
    spec: JudgeSpec,
    *,
    judge_b: JudgeSpec | None = None,
    self_temperature: float | None = None,
    cache: Path | None = None,
    scenarios: str | Path = "builtin",
    **options: Any,
) -> dict[str, Any]:
    opts = StudyOptions(**{"pairs": 24, "resamples": 500, "agreement_dialogues": 0, **options})
    run = run_validation(
        paths, scenarios=[scenarios], judge=spec, judge_b=judge_b,
        self_temperature=self_temperature, options=opts, cache_path=cache,
    )  # fmt: skip
    return asyncio.run(run)


def row(doc: dict[str, Any], pert: str, subset: str, scorer: str) -> dict[str, Any]:
    return next(
        r
        for r in doc["table"]
        if (r["perturbation"], r["subset"], r["scorer"]) == (pert, subset, scorer)
    )


def test_a_persona_sensitive_judge_detects_the_flip(runs: Path) -> None:
    doc = study([runs / "model-a", runs / "model-b"], judge("persona_sensitive"))
    flip = row(doc, "persona_flip", "aligned", "epm")
    assert flip["n"] >= 10
    assert flip["mean"] < 0
    assert flip["pr_negative"] > 0.5
    assert flip["verdict"] == "detects"
    assert "responds to the persona" in doc["conclusion"]
    # The pairs whose original move was not aligned are reported apart, with no verdict.
    apart = row(doc, "persona_flip", "not aligned", "epm")
    assert apart["n"] > 0 and apart["verdict"] == "n/a"
    assert flip["n"] + apart["n"] == 24
    # Every pair is recorded with the sample's ids and seed.
    assert doc["options"]["seed"] == 0 and len(doc["sample"]["point_ids"]) == 24
    assert {p["id"] for p in doc["pairs"]} == set(doc["sample"]["point_ids"])


def test_a_persona_blind_judge_ties_and_is_called_insensitive(runs: Path) -> None:
    doc = study([runs / "model-a"], judge("persona_blind"))
    flip = row(doc, "persona_flip", "aligned", "epm")
    assert flip["n"] >= 10
    assert flip["tie_rate"] == 1.0
    assert flip["verdict"] == "insensitive"
    assert "INSENSITIVE to the persona" in doc["conclusion"]


def test_surface_intensity_fools_the_direct_scorer_but_not_the_epm(runs: Path) -> None:
    doc = study([runs / "model-a"], judge("surface_intensity"))
    direct = row(doc, "sycophancy", "all kinds", "direct")
    epm = row(doc, "sycophancy", "all kinds", "epm")
    assert direct["mean"] > 0 and direct["verdict"] == "rewards"
    assert epm["mean"] < 0 and epm["verdict"] == "detects"
    for kind in ("affect", "slogans", "jargon"):
        assert row(doc, "sycophancy", kind, "epm")["n"] == 24


def test_agreement_self_is_perfect_and_random_is_near_chance(runs: Path) -> None:
    doc = study(
        [runs / "model-a", runs / "model-b"],
        judge("persona_sensitive"),
        judge_b=judge("random_judge"),
        self_temperature=0.7,
        agreement_dialogues=12,
        pairs=4,
    )
    vs_random, self_ = doc["agreement"]
    assert self_["label"].startswith("self-consistency")
    assert all(v == pytest.approx(1.0) for v in self_["kappa"].values() if v is not None)
    assert self_["sign_agreement"] == 1.0
    assert self_["epmq_spearman"] == pytest.approx(1.0)
    assert self_["leaderboard_order_a"] == self_["leaderboard_order_b"]
    kappas = [v for v in vs_random["kappa"].values() if v is not None]
    assert abs(float(np.mean(kappas))) < 0.3
    assert vs_random["sign_agreement"] < 0.8
    assert vs_random["points"] == 12 * 5 and vs_random["failed"] == 0


def test_a_rerun_is_answered_from_the_cache(runs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    first = study([runs / "model-a"], judge("persona_sensitive"), cache=cache, pairs=6)
    second = study([runs / "model-a"], judge("persona_sensitive"), cache=cache, pairs=6)
    assert first["sample"]["cache_hits"] == 0
    assert second["sample"]["cache_hits"] == second["sample"]["judge_calls"] > 0
    assert second["table"] == first["table"]


def test_stored_ratings_reproduce_the_stored_trajectory(runs: Path) -> None:
    """The scorer's delta_E and the agreement's EPM-Q, fed the stored ratings, give back
    what the records hold (so re-judged numbers sit on the same scale)."""
    loaded, _ = load_records([runs / "model-a"])
    scenarios = {s.id: s for s in load_builtin().scenarios}
    dialogues, missing = eval_points(loaded, scenarios)
    assert not missing
    stored = dialogue_scores([x.record for x in loaded], loaded[0].record.epm_config).epmq
    for pts, want in zip(dialogues, stored, strict=True):
        for p in pts:
            dE, _ = epm_delta(p.stored_levels, p.P_prev, p.v_star0, p.config)
            assert dE == pytest.approx(p.stored_delta_E)
        assert rescore_epmq(pts, [dict(p.stored_levels) for p in pts]) == pytest.approx(want)


def test_published_results_are_matched_and_rebuilt(empa_sample: Path) -> None:
    """On the published sample: every record finds its scenario in the published layout and
    each point's stored ratings give back the stored delta_E at the rebuilt state."""
    loaded, bad = load_records([empa_sample / "results"])
    assert loaded and not bad
    found = load_scenarios(empa_sample)
    dialogues, missing = eval_points(loaded, {s.id: s for s in found.scenarios})
    assert not missing and len(dialogues) == len(loaded)
    checked = 0
    for pts in dialogues:
        for p in pts:
            if p.stored_delta_E is None:
                continue
            dE, _ = epm_delta(p.stored_levels, p.P_prev, p.v_star0, p.config)
            assert dE == pytest.approx(p.stored_delta_E, abs=0.011)
            checked += 1
    assert checked > 100
    doc = study(
        [empa_sample / "results"], judge("persona_sensitive"), scenarios=empa_sample, pairs=6
    )
    assert doc["sample"]["points"] == 6 and doc["inputs"]["missing_scenarios"] == []


def test_rubric_only_score_ties_where_the_epm_sees_the_moved_credit(runs: Path) -> None:
    """The paper's ablation: when a flip moves credit between axes, the rubric-only sum is
    unchanged (ties) while the EPM's persona-weighted direction registers the move."""
    doc = study([runs / "model-a"], judge("credit_mover"), direct=False)
    rubric = row(doc, "persona_flip", "aligned", "rubric")
    epm = row(doc, "persona_flip", "aligned", "epm")
    assert rubric["n"] == epm["n"] >= 10
    assert rubric["tie_rate"] == 1.0 and rubric["verdict"] == "insensitive"
    assert epm["tie_rate"] < 0.5
    assert not any(r["scorer"] == "direct" for r in doc["table"])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_judge_fooled_by_affect_words_rewards_sycophancy(
    runs: Path, runs_zh: Path, language: str
) -> None:
    """Issue 24: a judge that sees progress in any reply holding affect words ties on most
    points (the originals that hold such words too) and scores the affect-only replies higher
    on all the others. A significant shift of the pairs that moved is the verdict, before the
    tie rule ("insensitive" before), and the summary is built from the per-kind rows (the
    pooled row mixes affect's rise with the other kinds' drop)."""
    root = runs if language == "en" else runs_zh
    doc = study([root / "model-a", root / "model-b"], judge("affect_words"), pairs=36)
    affect = row(doc, "sycophancy", "affect", "epm")
    assert affect["n"] == 36
    assert affect["tie_rate"] >= 0.5  # the tie rule alone would call it insensitive
    assert affect["pr_negative"] == 0 and affect["mean"] > 0 and affect["p_value"] < 0.05
    assert affect["verdict"] == "rewards"
    for kind in ("slogans", "jargon"):  # no affect word: the originals' credit is lost
        assert row(doc, "sycophancy", kind, "epm")["verdict"] == "detects"
    assert "The judge REWARDS sycophancy (affect)" in doc["conclusion"]
    assert "affect rewards (n 36, mean delta_E +" in doc["conclusion"]
    assert "slogans detects" in doc["conclusion"] and "jargon detects" in doc["conclusion"]
