"""`empathos rejudge`: re-rate a run's stored dialogues with another judge (docs/run.md).

The re-judging itself is ``empathos.run.rejudge_run``; its agreement with the original judge
is measured with ``empathos.validate.stats`` (the CLI composes the two applications).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from empathos.cli.run_console import interrupted_line
from empathos.epm import EPMConfig, TerminationKind
from empathos.records import DialogueRecord, load_records
from empathos.report import usage_line
from empathos.rubric import EMPATHY_RUBRIC
from empathos.scoring.dialogues import dialogue_scores
from empathos.validate.config import load_judge
from empathos.validate.stats import sign_agreement, spearman, weighted_kappa

__all__ = ["agreement", "register"]


def _levels(rec: DialogueRecord) -> dict[int, dict[str, int]]:
    """Complete, scored MDEP ratings by evaluation turn."""
    keys = {ind.key for ind in rec.rubric.mdep}
    out = {}
    for ev in rec.evaluations:
        levels = {k: r.level for k, r in ev.ratings.items() if r.level is not None}
        if ev.scored and set(levels) == keys:
            out[ev.turn] = levels
    return out


def agreement(pairs: Sequence[tuple[DialogueRecord, DialogueRecord]]) -> dict[str, Any]:
    """How the new judge agrees with the original over the same dialogues (original, new):
    quadratic-weighted kappa per MDEP indicator and the share of equal levels over the
    evaluations both rated, the share with the same sign of delta_E, the Spearman correlation
    of the dialogues' EPM-Q and the share with the same termination."""
    keys = [ind.key for ind in EMPATHY_RUBRIC.mdep]
    a: dict[str, list[int]] = {k: [] for k in keys}
    b: dict[str, list[int]] = {k: [] for k in keys}
    de_a: list[float] = []
    de_b: list[float] = []
    for old, new in pairs:
        la, lb = _levels(old), _levels(new)
        dea = {e.turn: e.state.delta_E for e in old.evaluations}
        deb = {e.turn: e.state.delta_E for e in new.evaluations}
        for turn in sorted(la.keys() & lb.keys()):
            for k in keys:
                a[k].append(la[turn][k])
                b[k].append(lb[turn][k])
            x, y = dea.get(turn), deb.get(turn)
            if x is not None and y is not None:
                de_a.append(x)
                de_b.append(y)
    scored = [(o, n) for o, n in pairs if TerminationKind.ERROR not in (
        o.termination.kind, n.termination.kind)]  # fmt: skip
    cfg = EPMConfig()
    q_a = dialogue_scores([o for o, _ in scored], cfg).epmq.tolist() if scored else []
    q_b = dialogue_scores([n for _, n in scored], cfg).epmq.tolist() if scored else []
    n_ratings = sum(len(v) for v in a.values())
    same = sum(x == y for k in keys for x, y in zip(a[k], b[k], strict=True))
    levels = {k: sorted(EMPATHY_RUBRIC.indicator(k).levels) for k in keys}
    return {
        "dialogues": len(pairs),
        "evaluations": len(a[keys[0]]),
        "kappa": {k: weighted_kappa(a[k], b[k], levels[k], "quadratic") for k in keys},
        "same_level": same / n_ratings if n_ratings else math.nan,
        "delta_e_sign": sign_agreement(de_a, de_b),
        "epmq_spearman": spearman(q_a, q_b),
        "same_termination": sum(
            (o.termination.kind, o.termination.turn) == (n.termination.kind, n.termination.turn)
            for o, n in pairs
        ),
    }


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
    from empathos.cli.run import failed_guidance
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
    from empathos.cli.run import sigterm_as_sigint
    from empathos.run.progress import RunProgress
    from empathos.run.rejudge_run import execute_rejudge, prepare_rejudge
    from empathos.run.session import close_session

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
    status: Any = "failed"
    with sigterm_as_sigint() as terminated:
        try:
            with RunProgress(err, plan.total, done_before=len(plan.finished)) as progress:
                outcome = asyncio.run(execute_rejudge(prepared, progress))
            status = "completed"
        except (KeyboardInterrupt, asyncio.CancelledError):  # CancelledError: see sigterm_as_sigint
            status = "interrupted"
            how = "SIGTERM" if terminated[0] else "Ctrl-C"
            done = f"{len(prepared.outcome.rows)} dialogue(s) re-judged"
            err.print(interrupted_line(how, done, out), markup=False)
            raise typer.Exit(143 if terminated[0] else 130) from None
        finally:
            close_session(prepared, prepared.outcome, status)
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
