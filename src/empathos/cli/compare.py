"""`empathos compare`: the paired comparison of two runs, or (``--pairwise``) a judge's
pairwise comparison of whole dialogues of two or more runs, rated (docs/pairwise.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from empathos.cli import pairwise as pw
from empathos.cli import pairwise_flags as pf
from empathos.cli.report import ScenariosOpt, _compare
from empathos.cli.score import Format, Label, LabelOpt, Preset
from empathos.errors import ConfigError
from empathos.report.compare import METRICS

__all__ = ["register"]

RunsArg = Annotated[
    list[Path],
    typer.Argument(
        help="Model A and model B (run or result directories); with --pairwise, two or more "
        "(none with --leaderboard-elo FILE --rating trueskill: the leaderboard re-solved).",
        show_default=False,
    ),
]
MetricOpt = Annotated[str, typer.Option(help=f"What to compare: {', '.join(METRICS)}.")]
PresetOpt = Annotated[Preset, typer.Option(help="EPM preset.")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        help="Also write a report of A and B with the comparison; with --pairwise, the "
        "pairwise results directory (default: pairwise; a rerun resumes it)."
    ),
]
PairwiseOpt = Annotated[
    bool,
    typer.Option("--pairwise", help="Judge whole dialogues in pairs and rate the models."),
]


def register(app: typer.Typer) -> None:
    """Mount ``compare`` on the main app."""

    @app.command("compare")
    def compare_cmd(
        runs: RunsArg = None,  # type: ignore[assignment]  # typer: zero or more
        metric: MetricOpt = "epmq",
        preset: PresetOpt = Preset.reference,
        out: OutOpt = None,
        scenarios: ScenariosOpt = None,
        label: LabelOpt = Label.auto,
        pairwise: PairwiseOpt = False,
        fmt: pf.FormatOpt = Format.table,
        config: pf.ConfigOpt = None,
        judge_model: pf.JudgeModelOpt = None,
        judge_base_url: pf.JudgeUrlOpt = None,
        judge_api_key_env: pf.JudgeKeyOpt = None,
        max_pairs: pf.MaxPairsOpt = None,
        pairs_per_model: pf.PerModelOpt = None,
        anchor: pf.AnchorOpt = None,
        anchor_rating: pf.AnchorRatingOpt = 1000.0,
        style: pf.StyleOpt = False,
        aspect: pf.AspectOpt = "overall",
        bootstrap: pf.BootstrapOpt = 200,
        seed: pf.SeedOpt = 0,
        concurrency: pf.ConcurrencyOpt = 4,
        eqbench3: pf.Eqbench3Opt = None,
        leaderboard: pf.LeaderboardOpt = None,
        leaderboard_elo: pf.LeaderboardEloOpt = None,
        rating: pf.RatingOpt = "bradley-terry",
        degraded_check: pf.DegradedOpt = False,
        degraded_threshold: pf.ThresholdOpt = 0.8,
    ) -> None:
        """Paired comparison of two models on their shared scenarios (and trials): wins,
        losses, ties, mean difference with a bootstrap interval and a permutation p-value.
        A side with no scored dialogue (all errors), or no shared pair, is an error. With
        --pairwise, a judge compares whole dialogues of two or more runs, each pair in both
        orders: Bradley-Terry ratings with intervals, the win matrix, the flip rate."""
        if pairwise:
            flags = dict(
                config=config, judge_model=judge_model, judge_base_url=judge_base_url,
                judge_api_key_env=judge_api_key_env, max_pairs=max_pairs,
                pairs_per_model=pairs_per_model, anchor=anchor,
                anchor_rating=anchor_rating, style=style, aspect=aspect, label=label.value,
                bootstrap=bootstrap,
                seed=seed, concurrency=concurrency, eqbench3=eqbench3, scenarios=scenarios,
                leaderboard=leaderboard, leaderboard_elo=leaderboard_elo, rating=rating,
                degraded_check=degraded_check, degraded_threshold=degraded_threshold,
            )  # fmt: skip
            code = pw.pairwise_main(runs or [], out, fmt.value, flags)
        elif runs is None or len(runs) != 2:
            raise ConfigError(
                f"compares two runs, got {len(runs or [])} (or use --pairwise)", field="RUN"
            )
        else:
            code = _compare(runs[0], runs[1], metric, preset, out, scenarios, label)
        if code:
            raise typer.Exit(code)
