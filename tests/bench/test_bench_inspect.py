"""The benchmarks as Inspect tasks, run by the real inspect-ai on a loopback server (Inspect's
``openai-api`` provider): ``empathos/eqbench3`` with the judge as a model role gives the
numbers ``empathos bench`` gives on the same scripted models; ``empathos/eqbench`` too;
``empathos/sage`` plays the sample copy's dialogues with the simulated user as a model role.
Every benchmark of the registry, and no other, is an Inspect task ``empathos/<name>``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install 'empathos[inspect]'")

from bench_helpers import ScriptedServer, ratings_text, write_eq_questions
from eqbench3_fixture import scripted, write_eqbench3
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from inspect_ai.util import registry_create, registry_info
from sage_fixture import tested as sage_tested

from empathos.bench.protocol import REGISTRY, benchmark
from empathos.sage.copy import read_sage


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
    for name in ("TESTED", "JUDGE", "USER"):
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


def test_every_registered_benchmark_is_an_inspect_task(tmp_path: Path) -> None:
    """Inspect's own registry holds ``empathos/<name>`` for each name of the benchmark
    registry and no other bench task, each with the one parameter ``data`` and its
    benchmark's description; Inspect creates each by that name (public ``registry_create``,
    which loads the package's entry point): a missing copy is Inspect's one-line
    prerequisite error naming the task."""
    from inspect_ai._util.registry import registry_find  # private: only it lists the registry

    missing = tmp_path / "no-copy"
    for name in REGISTRY:
        with pytest.raises(Exception, match=rf"^empathos/{name}: -T data: ") as caught:
            registry_create("task", f"empathos/{name}", data=str(missing))
        assert type(caught.value).__name__ == "PrerequisiteError"
    found = {
        registry_info(t).name: t
        for t in registry_find(lambda i: i.type == "task" and i.name.startswith("empathos/"))
    }
    bench_tasks = set(found) - {"empathos/empa", "empathos/empa_judge_check"}
    assert bench_tasks == {f"empathos/{name}" for name in REGISTRY}
    for name in REGISTRY:
        task = found[f"empathos/{name}"]
        assert registry_info(task).metadata["params"] == ["data"]
        assert task.__doc__ is not None and task.__doc__.startswith(benchmark(name).about)
        assert f"data: {benchmark(name).data_help}" in task.__doc__
    assert "--model-role user=MODEL" in (found["empathos/sage"].__doc__ or "")


def _sage_user(copy: Path) -> Callable[[dict[str, Any]], str]:
    """The simulated user on the sample copy: its analyser (told by the copy's own analyser
    prompt, read at run time) moves the 1st profile's emotion by +3 a turn and the 2nd's by
    -10; its replies never say goodbye."""
    sage = read_sage(copy)
    analyser = sage.prompts.analyser.split("{{")[0]
    first = sage.profiles[0]["player"]

    def reply(body: dict[str, Any]) -> str:
        if body["model"] != "sim":
            return sage_tested(body)
        prompt = body["messages"][-1]["content"]
        if prompt.startswith(analyser):
            change = "+3" if first in prompt else "-10"
            return (
                f"Content:\nc\nTargetCompletion:\nt\nActivity:\na\nAnalyse:\nw\nChange:\n{change}"
            )
        return "Thinking:\nhmm\nResponse:\n[still here]"

    return reply


def test_sage_task_on_the_sample_copy(
    sage_sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two of the sample's dialogues, hand counted: +3 a turn from 40 runs all 10 user turns
    to 67; -10 a turn reaches 0 at the 5th user turn, a failure. The metrics are SAGE's."""
    ids = [p["id"] for p in read_sage(sage_sample).profiles[:2]]
    with ScriptedServer(_sage_user(sage_sample)) as server:
        _env(monkeypatch, server.url, tmp_path)
        user = get_model("openai-api/user/sim", memoize=False, max_retries=0)
        [log] = inspect_eval(
            "empathos/sage",
            # not memoized: a model of that name cached by an earlier test calls its server
            model=get_model("openai-api/tested/tested", memoize=False, max_retries=0),
            model_roles={"user": user},
            task_args={"data": str(sage_sample)},
            limit=2,
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.status == "success", log.error
    assert log.samples is not None and log.results is not None
    records = {s.id: s.store["empathos:bench"] for s in log.samples}
    assert sorted(records) == sorted(ids)
    grows, falls = records[ids[0]], records[ids[1]]
    assert (grows["sage"]["emo_point"], grows["sage"]["emo_state"]) == (67, "Emotion-B")
    assert [m["role"] for m in grows["messages"]] == ["system"] + ["user", "assistant"] * 10
    assert grows["messages"][-1]["content"] == "reply 10"
    assert (falls["sage"]["emo_point"], falls["sage"]["emo_state"]) == (0, "Emotion-F")
    assert [m["role"] for m in falls["messages"]] == ["system"] + ["user", "assistant"] * 4 + [
        "user"
    ]
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["emotion"] == 33.5  # (67 + 0) / 2
    assert (metrics["score"], metrics["successes"], metrics["failures"]) == (33.5, 0.0, 1.0)
