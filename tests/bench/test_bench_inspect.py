"""The benchmarks as Inspect tasks, run by the real inspect-ai on a loopback server (Inspect's
``openai-api`` provider): ``empathos/eqbench3`` with the judge as a model role gives the
numbers ``empathos bench`` gives on the same scripted models; ``empathos/eqbench`` too."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from bench_helpers import ScriptedServer, ratings_text, write_eq_questions
from eqbench3_fixture import scripted, write_eqbench3
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model


@pytest.fixture(autouse=True)
def _restore_process_state() -> Iterator[None]:
    """Inspect's eval changes the root logger and sys.excepthook for the whole process."""
    root = logging.getLogger()
    handlers, level, hook = list(root.handlers), root.level, sys.excepthook
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    sys.excepthook = hook


def _env(monkeypatch: pytest.MonkeyPatch, url: str, tmp_path: Path) -> None:
    for name in ("TESTED", "JUDGE"):
        monkeypatch.setenv(f"{name}_BASE_URL", url)
        monkeypatch.setenv(f"{name}_API_KEY", "unused")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "inspect-data"))


def test_eqbench3_and_eqbench_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eq3 = write_eqbench3(tmp_path / "eqbench3")
    eq2 = write_eq_questions(tmp_path / "EQ-Bench").parents[1]

    def model(body: dict) -> str | int:
        if body["messages"][-1]["content"].startswith("Question "):
            qid = body["messages"][-1]["content"].split(":")[0].removeprefix("Question ")
            return ratings_text(qid, 0)
        return scripted(body)

    with ScriptedServer(model) as server:
        _env(monkeypatch, server.url, tmp_path)
        judge = get_model("openai-api/judge/judge", memoize=False, max_retries=0)
        [log3] = inspect_eval(
            "empathos/eqbench3",
            model="openai-api/tested/tested",
            model_roles={"judge": judge},
            task_args={"data": str(eq3)},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
        [log2] = inspect_eval(
            "empathos/eqbench",
            model="openai-api/tested/tested",
            task_args={"data": str(eq2)},
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log3.status == "success", log3.error
    metrics = log3.results.scores[0].metrics
    assert metrics["rubric"].value == 68.75  # as `empathos bench eqbench3` on the same models
    samples = {s.id: s for s in log3.samples}
    record = samples["1"].store["empathos:bench"]
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"] * 3
    assert record["judge"]["criteria"]["pragmatic_ei"] == 16
    assert log2.status == "success", log2.error
    metrics2 = log2.results.scores[0].metrics
    assert metrics2["score"].value == 100.0 and metrics2["parse_rate"].value == 1.0
