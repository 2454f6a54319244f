"""The flags of ``empathos compare --pairwise`` (docs/pairwise.md), apart from the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from empathos.cli.score import Format

FormatOpt = Annotated[Format, typer.Option("--format", help="Output: table, json or csv.")]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="YAML with a judge: endpoint section.")
]
JudgeModelOpt = Annotated[str | None, typer.Option(help="The pairwise judge's model id.")]
JudgeUrlOpt = Annotated[
    str | None, typer.Option(help="The pairwise judge's OpenAI-compatible base URL.")
]
JudgeKeyOpt = Annotated[
    str | None, typer.Option(help="NAME of the variable holding the judge's key.")
]
MaxPairsOpt = Annotated[
    int | None,
    typer.Option(
        min=1, help="Budget: at most this many pairs in all (2 calls each), the informative "
        "first. Default: every pair.",
    ),
]  # fmt: skip
PerModelOpt = Annotated[
    int | None,
    typer.Option(
        min=1, help="Budget: about this many pairs per model (ceil(K x models / 2) in all).",
    ),
]  # fmt: skip
AnchorOpt = Annotated[str | None, typer.Option(help="The model the Elo-like scale is anchored on.")]
AnchorRatingOpt = Annotated[float, typer.Option(help="The anchor model's rating.")]
StyleOpt = Annotated[
    bool,
    typer.Option(
        "--style-control",
        "--length-covariate",
        help="Style control: fit length and markdown (headers, lists, bold) of the replies as "
        "the judge saw them as covariates, in one fit with the ratings.",
    ),
]
AspectOpt = Annotated[
    str, typer.Option(help="Which verdict to rate: overall, cognitive, affective, proactive.")
]
BootstrapOpt = Annotated[int, typer.Option(min=10, help="Bootstrap draws over scenarios.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the matchup order and the bootstrap.")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Judge calls at once.")]
Eqbench3Opt = Annotated[
    Path | None,
    typer.Option(
        help="Judge with EQ-Bench 3's pairwise prompt, read from this copy of its data/ "
        "folder (runs: `empathos bench eqbench3` directories or transcript run directories)."
    ),
]

LeaderboardOpt = Annotated[
    Path | None,
    typer.Option(
        help="With --eqbench3: EQ-Bench 3's leaderboard runs file (canonical_leaderboard_"
        "results.json.gz, or .json): its models' transcripts are the opponents.",
    ),
]
LeaderboardEloOpt = Annotated[
    Path | None,
    typer.Option(
        help="With --leaderboard: its Elo file (canonical_leaderboard_elo_results.json.gz): "
        "the opponents' ratings (the scale) and judged orders.",
    ),
]
RatingOpt = Annotated[
    str,
    typer.Option(help="bradley-terry (default), or trueskill (EQ-Bench 3's, with --eqbench3)."),
]
DegradedOpt = Annotated[
    bool,
    typer.Option(
        "--degraded-check",
        help="Validate the judge: each dialogue against a degraded copy (performative "
        "replies); pass when the copy loses at least --degraded-threshold of the pairs.",
    ),
]
ThresholdOpt = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="The --degraded-check pass mark.")
]
