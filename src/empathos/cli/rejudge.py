"""`empathos rejudge`: re-rate a run's stored dialogues with another judge (docs/run.md).

The re-judging itself is ``empathos.run.rejudge_run``; its agreement with the original judge
is measured with ``empathos.validate.rejudge_agreement`` (the CLI composes the two
applications and prints what they return).
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from empathos.cli.run_console import stopped
from empathos.records import load_records
from empathos.report import usage_line
from empathos.run.interrupt import Interrupted, interruptible
from empathos.validate.config import load_judge
from empathos.validate.rejudge_agreement import agreement

__all__ = ["register"]


def _num(x: float, pattern: str = "{:.2f}") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else pattern.format(x)


def _print_agreement(stats: dict[str, Any], judges: tuple[str, str], out: Console) -> None:
    out.print(
        f"agreement with the original judge ({judges[0]} -> {judges[1]}): "
        f"{stats['dialogues']} dialogue(s), {stats['evaluations']} evaluation(s) rated by both",
        markup=False,
    )
    kappas = ", ".join(f"{k} {_num(v)}" for k, v in stats["kappa"].items())
    out.print(f"  weighted kappa (quadratic): {kappas}", markup=False)
    out.print(
        f"  same level: {_num(stats['same_level'], '{:.0%}')} of the ratings; same sign of "
        f"delta_E: {_num(stats['delta_e_sign'], '{:.0%}')} of the evaluations",
        markup=False,
    )
    out.print(
        f"  EPM-Q: Spearman {_num(stats['epmq_spearman'])} over the dialogues; same "
        f"termination (kind and turn): {stats['same_termination']} of {stats['dialogues']}",
        markup=False,
    )


def _first_failure(out: Path) -> str | None:
    """The reason of the first failed judge call among ``out``'s records (an evaluation left
    unscored says only how many were; its reason names the endpoint's error)."""
    records, _ = load_records([out / "records"])
    for item in records:
        for ev in item.record.evaluations:
            if not ev.scored and ev.unscored_reason:
                return ev.unscored_reason
        for call in item.record.model_calls:
            if call.error:
                return call.error
    return None


def _report(prepared: Any, run: Path, out: Path, outcome: Any, err: Console) -> int:
    """Usage, then the agreement with the original judge, or the run's FAILED advice."""
    from empathos.cli.run_console import failed_guidance
    from empathos.run.session import usage_of

    err.print(usage_line(usage_of(prepared)), markup=False)
    if outcome.failed:
        first = _first_failure(out)
        if first:
            err.print(f"first failed judge call: {first}", markup=False)
        failed_guidance(out, outcome, err, what="rejudge", done="re-judged")
        return 3
    new, _ = load_records([out / "records"])
    by_id = {x.path.stem: x.record for x in new}
    pairs = [(o.record, by_id[k]) for k, o in sorted(prepared.originals.items()) if k in by_id]
    if pairs:
        judges = (pairs[0][0].roles.get("judge", "?"), prepared.judge.model)
        _print_agreement(agreement(pairs), judges, Console(highlight=False, soft_wrap=True))
    err.print(f"records: {out}/records (score with: empathos score {run} {out})", markup=False)
    return 1 if outcome.errors or outcome.crashed or prepared.unreadable else 0


def _rejudge(
    run: Path, out: Path, judge_args: tuple[Path | None, str | None, str | None, str | None],
    scenarios: list[str], keep_p0: bool, concurrency: int, force: bool,
) -> int:  # fmt: skip
    from empathos.run.drive import drive_session
    from empathos.run.rejudge_run import execute_rejudge, prepare_rejudge

    config, model, base_url, key_env = judge_args
    flags = {"judge_model": model, "judge_base_url": base_url, "judge_api_key_env": key_env}
    judge = load_judge(config, flags)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    prepared = prepare_rejudge(
        run, out, judge, scenarios=scenarios, keep_p0=keep_p0, concurrency=concurrency,
        force=force,
    )  # fmt: skip
    for problem in prepared.unreadable:
        err.print(f"warning: skipped {problem.line()}", markup=False)
    plan = prepared.plan
    err.print(
        f"re-judging {len(plan.pending)} of {plan.total} dialogue(s) of {run} with "
        f"{prepared.judge.model} into {out} ({len(plan.finished)} done before)",
        markup=False,
    )
    done = lambda: f"{len(prepared.outcome.rows)} dialogue(s) re-judged"  # noqa: E731
    try:  # the session is closed whatever happens (drive_session), then the stop is said
        with interruptible(done, out):
            outcome = drive_session(prepared, partial(execute_rejudge, prepared), err, plan)
    except Interrupted as stop:
        raise stopped(stop, err) from None
    return _report(prepared, run, out, outcome, err)


def register(app: typer.Typer) -> None:
    """Mount ``rejudge`` on the main app."""

    @app.command("rejudge")
    def rejudge_cmd(
        run: Annotated[Path, typer.Argument(help="The run directory whose dialogues to re-rate.")],
        out: Annotated[Path, typer.Option(help="The new run directory (resumable).")],
        config: Annotated[
            Path | None, typer.Option("--config", help="YAML with a judge: endpoint section.")
        ] = None,
        judge_model: Annotated[str | None, typer.Option(help="Judge model id.")] = None,
        judge_base_url: Annotated[
            str | None, typer.Option(help="Judge's OpenAI-compatible base URL.")
        ] = None,
        judge_api_key_env: Annotated[
            str | None, typer.Option(help="NAME of the variable holding the judge's key.")
        ] = None,
        scenarios: Annotated[
            list[str] | None,
            typer.Option(
                "--scenarios",
                help="Scenario sources (repeatable). Default: the run's own (its manifest).",
            ),
        ] = None,
        keep_p0: Annotated[
            bool, typer.Option("--keep-p0", help="Keep the run's P_0 (no new IEDR rating).")
        ] = False,
        concurrency: Annotated[int, typer.Option(min=1, help="Dialogues at once.")] = 4,
        force: Annotated[
            bool, typer.Option("--force", help="Start --out over if it was made otherwise.")
        ] = False,
    ) -> None:
        """Re-rate every stored turn of RUN's dialogues with another judge (the run's own when
        none is given) and replay the EPM on the new ratings: records marked re-judged in
        --out (the dialogue is the original; the trajectory is the new judge's), then the
        agreement with the original judge."""
        code = _rejudge(
            run, out, (config, judge_model, judge_base_url, judge_api_key_env),
            scenarios or [], keep_p0, concurrency, force,
        )  # fmt: skip
        if code:
            raise typer.Exit(code)
