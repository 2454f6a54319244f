"""The run's progress display: one plain line per finished dialogue, in a terminal and in a
log file alike (the reason as written: no markup or emoji codes read into it), and the bar
redrawn by a thread only where someone can see it."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from empathos.run.progress import RunProgress
from empathos.run.rundir import DialogueKey, IndexRow


def _row(key: DialogueKey, status: str, reason: str = "") -> IndexRow:
    return IndexRow(
        dialogue_id=key.id,
        scenario_id=key.scenario_id,
        trial=key.trial,
        scenario_hash=None,
        status=status,  # type: ignore[arg-type]
        termination="error" if status == "error" else "success_geometric",
        reason=reason,
        turns=4,
        input_tokens=10,
        output_tokens=20,
        cost_usd=None,
        file=f"records/{key.id}.json",
        finished_at="2026-12-01T00:00:00Z",
    )


def _show(console: Console) -> int:
    a, b = DialogueKey("en-01", 0), DialogueKey("en-02", 1)
    with RunProgress(console, 2) as progress:
        threads = threading.active_count()
        progress.dialogue_finished(a, _row(a, "done"))
        progress.dialogue_finished(b, _row(b, "error", "judge said :smile: [bold]no[/bold]"))
    return threads


def test_a_log_file_gets_plain_lines_and_the_final_bar_without_a_redraw_thread() -> None:
    out = io.StringIO()
    before = threading.active_count()
    during = _show(Console(file=out, width=120))
    text = out.getvalue()
    assert during == before  # nothing redraws a bar nobody sees
    lines = text.splitlines()
    assert lines[0] == "finished en-01__t0: success_geometric after 4 turn(s)"
    assert lines[1] == "error    en-02__t1: judge said :smile: [bold]no[/bold]"
    assert "2/2" in text.split(lines[1], 1)[1]  # the bar, drawn once at the end


def test_a_terminal_gets_the_same_lines_above_a_live_bar() -> None:
    out = io.StringIO()
    before = threading.active_count()
    during = _show(Console(file=out, width=120, force_terminal=True, color_system=None))
    assert during == before + 1  # the bar's redraw thread
    text = out.getvalue()
    assert "finished en-01__t0: success_geometric after 4 turn(s)" in text
    assert "error    en-02__t1: judge said :smile: [bold]no[/bold]" in text
