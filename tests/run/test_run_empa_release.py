"""``empathos run --protocol empa-release`` through a stand-in of the release (tests/run/
empa_standin: own code implementing the release's public API; the real release was not
available when this was written)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from run_helpers import empathos, index_rows, manifest, scripted_roles, write_config

from empathos.llm import ChatRequest, EndpointConfig, build_model
from empathos.llm.scripted import Reply
from empathos.llm.testing import FaultServer, Step

HANDLERS = Path(__file__).with_name("empa_release_handlers.py").resolve()
STANDIN = Path(__file__).with_name("empa_standin").resolve()
BROKEN = Path(__file__).with_name("empa_broken").resolve()
SRC = os.environ.get("PYTHONPATH", "")


def _env(*extra: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([*map(str, extra), SRC])}


def _config(tmp_path: Path, **fields: Any) -> Path:
    return write_config(
        tmp_path / "run.yaml",
        roles=fields.pop("roles", scripted_roles()),
        max_turns=3,
        concurrency=3,
        protocol="empa-release",
        **fields,
    )


@pytest.fixture
def standin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(STANDIN))


def test_bridge_speaks_the_release_calls_on_the_wire(standin_path: None) -> None:
    from empathos.run.protocols.empa_release import bridge_client, load_release

    release = load_release()
    message = release.attr("empa.llm.base", "Message")
    with FaultServer() as server:
        server.script(
            Step.ok("not json at all"),
            Step.ok('{"C.Prog": 2}'),
            Step.ok(None, tool=("continue_story", '{"hint": "slow down"}')),
        )
        config = EndpointConfig(base_url=server.url, model="judge-m", frequency_penalty=0.1)
        client = build_model(config, "judge", None)

        async def main() -> tuple[Any, Any, str]:
            bridge = bridge_client(release, client, "judger")
            rated = await asyncio.to_thread(
                bridge.complete,
                [message("user", "rate it")],
                temperature=0.0,
                max_tokens=8000,
                response_format={"type": "json_object"},
            )
            tools = [{"type": "function", "function": {"name": "continue_story",
                      "parameters": {"type": "object", "properties": {}}}}]  # fmt: skip
            directed = await asyncio.to_thread(
                bridge.complete, [message("user", "go")], tools=tools
            )
            await client.aclose()
            return rated, directed, bridge.name

        rated, directed, name = asyncio.run(main())
        bodies = list(server.requests)
    assert isinstance(rated, release.attr("empa.llm.base", "LLMResponse"))
    assert json.loads(rated.content) == {"C.Prog": 2}  # the bad JSON was re-asked
    assert name == "judge-m"
    first = bodies[0]
    assert first["response_format"] == {"type": "json_object"}
    assert first["max_tokens"] == 8000 and first["temperature"] == 0.0
    assert first["presence_penalty"] == 0.7  # the release client's penalty, reproduced
    assert first["frequency_penalty"] == 0.1  # the role's own setting wins
    assert len(bodies) == 3 and "response_format" not in bodies[2]
    assert bodies[2]["tools"][0]["function"]["name"] == "continue_story"
    assert "tool_choice" not in bodies[2]  # as the release sends it: the endpoint's default
    assert directed.tool_calls[0].name == "continue_story"
    assert directed.tool_calls[0].arguments == {"hint": "slow down"}


def test_run_through_standin_concurrent_logged_resumable_scored(tmp_path: Path) -> None:
    config = _config(tmp_path, roles=scripted_roles(user="slow"), trials=2)
    out = tmp_path / "out"
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path, env=_env(STANDIN))
    assert done.returncode == 0, done.stderr
    rows = index_rows(out)
    assert sorted(rows) == [f"case_00{c}__t{t}" for c in (1, 2) for t in (0, 1)]  # official
    assert all(r["status"] == "done" and r["input_tokens"] > 0 for r in rows.values())
    # the release's prints went to one log per dialogue, none to the console
    assert "[case_00" not in done.stdout + done.stderr
    peaks = []
    for dialogue_id in rows:
        log = (out / "logs" / f"{dialogue_id}.log").read_text(encoding="utf-8")
        case = dialogue_id.split("__")[0]
        lines = [line for line in log.splitlines() if line.startswith("[")]
        assert lines and all(line.startswith(f"[{case}]") for line in lines), log
        peaks += [int(line.rsplit(" ", 1)[1]) for line in lines if "in flight" in line]
    assert max(peaks) >= 2  # dialogues ran at the same time, each in its own thread
    record = json.loads((out / "records" / "case_001__t0.json").read_text(encoding="utf-8"))
    assert record["epj"]["trajectory"] and record["script_id"] == "case_001"
    mark = record["empathos"]
    assert mark["protocol"] == "empa-release" and mark["release_version"] == "0.0.0+standin"
    roles = {c["role"] for c in mark["model_calls"]}
    assert roles == {"user", "director", "judge", "tested"}
    assert manifest(out)["versions"]["empa"] == "0.0.0+standin"
    stamp = (out / "records" / "case_001__t0.json").stat().st_mtime_ns

    again = empathos("run", "--config", config, "--out", out, cwd=tmp_path, env=_env(STANDIN))
    assert again.returncode == 0, again.stderr
    assert "4 of 4 dialogue(s) already finished; running 0" in again.stderr
    assert (out / "records" / "case_001__t0.json").stat().st_mtime_ns == stamp

    scored = empathos("score", out, cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert "scripted-model_under_test" in scored.stdout
    report = empathos("report", out, "--out", tmp_path / "rep", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "rep" / "index.html").is_file()


def test_model_failure_is_an_error_record_retried_on_resume(tmp_path: Path) -> None:
    roles = scripted_roles()
    roles["user"]["handler"] = f"{HANDLERS}:outage_while_flagged"  # case_001: sourdough
    config = _config(tmp_path, roles=roles, cases="case_001,case_003")
    out = tmp_path / "out"
    (tmp_path / "outage.flag").write_text("on", encoding="utf-8")
    done = empathos("run", "--config", config, "--out", out, cwd=tmp_path, env=_env(STANDIN))
    assert done.returncode == 1, done.stderr
    rows = index_rows(out)
    assert rows["case_003__t0"]["status"] == "done"
    assert rows["case_001__t0"]["status"] == "error"
    assert "scripted outage" in rows["case_001__t0"]["reason"]
    assert "case_001__t0" in done.stderr and "ended as errors" in done.stderr
    (tmp_path / "outage.flag").unlink()
    again = empathos("run", "--config", config, "--out", out, cwd=tmp_path, env=_env(STANDIN))
    assert again.returncode == 0, again.stderr
    assert "running 1" in again.stderr
    assert index_rows(out)["case_001__t0"]["status"] == "done"


def test_a_call_raising_timeout_error_fails_at_once_and_is_recorded(standin_path: None) -> None:
    # The bridge polls its call with a timeout of its own: a call that itself raises
    # TimeoutError must end the wait (it used to be taken for the poll's, and spin).
    from empathos.run.protocols.empa_release import bridge_client, load_release
    from empathos.run.protocols.release_bridge import DialogueCalls

    release = load_release()
    message = release.attr("empa.llm.base", "Message")

    def upstream_times_out(request: ChatRequest) -> Reply:
        raise TimeoutError("upstream took too long")

    client = build_model(EndpointConfig(kind="scripted", model="judge-m"), "judge",
                         handler=upstream_times_out)  # fmt: skip
    raised: list[BaseException] = []

    def call(bridge: Any) -> None:
        try:
            bridge.complete([message("user", "rate it")])
        except BaseException as exc:  # what the release's thread would see
            raised.append(exc)

    async def main() -> DialogueCalls:
        calls = DialogueCalls(loop=asyncio.get_running_loop())
        worker = threading.Thread(
            target=call, args=(bridge_client(release, client, "judger", calls),), daemon=True
        )
        worker.start()
        for _ in range(50):  # 5 s at most
            if not worker.is_alive():
                break
            await asyncio.sleep(0.1)
        calls.cancelled.set()  # stops a spinning bridge (the test then fails below)
        await asyncio.to_thread(worker.join, 5)
        return calls

    calls = asyncio.run(main())
    assert len(raised) == 1 and isinstance(raised[0], TimeoutError), raised
    assert [(c.role, c.error) for c in calls.calls] == [
        ("judge", "the judger's model call raised TimeoutError: upstream took too long")
    ]
    assert calls.failure == calls.calls[0].error


def test_a_call_raising_any_exception_ends_the_dialogue_as_an_error_naming_it(
    tmp_path: Path,
) -> None:
    roles = scripted_roles()
    roles["user"]["handler"] = f"{HANDLERS}:user_times_out"  # case_001: sourdough
    config = _config(tmp_path, roles=roles, cases="case_001,case_003")
    out = tmp_path / "out"
    done = empathos(
        "run", "--config", config, "--out", out, cwd=tmp_path, env=_env(STANDIN), timeout=120
    )
    assert done.returncode == 1, done.stderr
    rows = index_rows(out)
    assert rows["case_003__t0"]["status"] == "done"
    assert rows["case_001__t0"]["status"] == "error"
    named = "the actor's model call raised TimeoutError: upstream took too long"
    assert named in rows["case_001__t0"]["reason"]
    record = json.loads((out / "records" / "case_001__t0.json").read_text(encoding="utf-8"))
    failed = [c for c in record["empathos"]["model_calls"] if c.get("error")]
    assert [(c["role"], c["error"]) for c in failed] == [("user", named)]
    assert record["empathos"]["error"] == named


@pytest.mark.parametrize(
    ("paths", "extra", "needle"),
    [
        ((), (), "pip install -e PATH"),
        ((BROKEN,), (), "is not a compatible EMPA release"),
        ((STANDIN,), ("--scenarios", "builtin-x"), "--scenarios"),
        ((STANDIN,), ("--cases", "script_404"), "cannot load case 'script_404'"),
    ],
)
def test_refusals_are_one_line_exit_2(
    tmp_path: Path, paths: tuple[Path, ...], extra: tuple[str, ...], needle: str
) -> None:
    config = _config(tmp_path)
    done = empathos(
        "run", "--config", config, "--out", tmp_path / "o", *extra, cwd=tmp_path, env=_env(*paths)
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], done.stderr
    assert "Traceback" not in done.stderr
