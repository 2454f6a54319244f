"""End-to-end tests of `empathos distill` with a scripted distiller and judge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from distill_handlers import Interrupted, handler, make_interrupting

from conftest import scripted
from empathos.distill import DistillOptions, read_conversations, run_distill
from empathos.errors import InputError
from empathos.llm import EndpointConfig, ModelClient, ScriptedBackend, auto_reply
from empathos.sandbox import Roles, SandboxConfig, run_dialogue
from empathos.scenarios import load_scenarios

MODELS = {"distiller": "scripted:test", "judge": "scripted:test"}


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _conv(cid: str, seeker: list[str], lang: str = "en") -> dict[str, object]:
    turns = []
    for line in seeker:
        turns.append({"speaker": "seeker", "text": line})
        turns.append({"speaker": "supporter", "text": "That sounds hard. Tell me more."})
    return {"id": cid, "language": lang, "turns": turns}


async def _distil(paths: list[Path], out: Path, h=handler) -> tuple[object, ScriptedBackend]:  # type: ignore[no-untyped-def]
    distiller, backend = scripted(h)
    judge = ModelClient(backend, EndpointConfig(kind="scripted"), role="judge")
    convs = read_conversations(paths)
    summary = await run_distill(
        convs, distiller, judge, DistillOptions(out=out, concurrency=2), models=MODELS
    )
    return summary, backend


async def test_every_input_format_becomes_checked_scenarios(corpus: Path, tmp_path: Path) -> None:
    rows = _lines(corpus)
    ours = _write_jsonl(tmp_path / "ours.jsonl", rows[:2])
    openai = _write_jsonl(
        tmp_path / "openai.jsonl",
        [
            {
                "id": f"oa-{r['id']}",
                "messages": [{"role": "system", "content": "You are a helpful listener."}]
                + [
                    {
                        "role": "user" if t["speaker"] == "seeker" else "assistant",
                        "content": t["text"],
                    }
                    for t in r["turns"]  # type: ignore[attr-defined]
                ],
            }
            for r in rows[2:4]
        ],
    )
    esconv = tmp_path / "esconv.json"
    esconv.write_text(
        json.dumps(
            [
                {
                    "emotion_type": "sadness",
                    "problem_type": "job crisis",
                    "situation": "Lost a job",
                    "dialog": [
                        {"speaker": t["speaker"], "content": t["text"]}
                        for t in r["turns"]  # type: ignore[attr-defined]
                    ],
                }
                for r in rows[8:10]  # Chinese
            ],
            ensure_ascii=False,
        ),
        "utf-8",
    )
    convs = read_conversations([ours, openai, esconv])
    assert [c.format for c in convs] == ["ours"] * 2 + ["openai"] * 2 + ["esconv"] * 2
    assert all(t.text != "You are a helpful listener." for c in convs for t in c.turns)
    assert [c.language for c in convs[4:]] == ["zh", "zh"]
    assert convs[4].labels["problem_type"] == "job crisis"

    summary, _ = await _distil([ours, openai, esconv], tmp_path / "out")
    assert summary.count("written") == 6, [(i.source_id, i.reason) for i in summary.items]
    loaded = load_scenarios(tmp_path / "out" / "scenarios")
    assert loaded.errors == []
    assert len(loaded.scenarios) == 6
    for s in loaded.scenarios:
        assert s.iedr is not None and s.labels.dominant_axis is not None
        assert s.labels.difficulty is not None and s.labels.domain is not None
        prov = s.metadata["distill"]
        assert prov["source_id"] in {c.id for c in convs}
        assert prov["models"] == MODELS
        assert set(prov["prompts"]) >= {
            f"distill_extract.{s.labels.language}",
            f"judge_iedr.{s.labels.language}",
        }
    # thresholds vary across the set
    assert len({s.persona.threshold for s in loaded.scenarios}) == 3
    # the state keeps every stage's raw output; no source text without --keep-source
    state = tmp_path / "out" / "state" / convs[0].id
    for stage in ("extract", "persona", "crisis", "iedr"):
        rec = json.loads((state / f"{stage}.json").read_text("utf-8"))
        assert rec["raw"] and rec["prompt"]["version"] and rec["model"]
    assert not (state / "source.json").exists()


def test_unknown_layout_is_one_clear_error(tmp_path: Path) -> None:
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"id": "x", "text": "hello"}])
    with pytest.raises(InputError) as err:
        read_conversations([bad])
    assert str(bad) in err.value.line() and "unknown conversation layout" in err.value.line()


PLANTED = {
    "name": "Marta Kowalczyk",
    "first": "Marta",
    "phone": "+1 415 555 0199",
    "email": "marta.k@example.org",
    "address": "27 Willow Bank Road",
}


async def test_planted_personal_data_never_reaches_the_model_or_output(tmp_path: Path) -> None:
    conv = {
        "id": "pii",
        "language": "en",
        "turns": [
            {
                "speaker": "seeker",
                "text": f"Hi, my name is {PLANTED['name']} and I moved out of my flat today",
                "name": "Marta",
            },
            {
                "speaker": "supporter",
                "text": f"Hello {PLANTED['first']}, I'm glad you reached out.",
            },
            {
                "speaker": "seeker",
                "text": f"My landlord at {PLANTED['address']} kept my deposit and went quiet",
            },
            {
                "speaker": "seeker",
                "text": f"He can call {PLANTED['phone']} or write to {PLANTED['email']}",
            },
        ],
    }
    src = _write_jsonl(tmp_path / "c.jsonl", [conv])
    summary, backend = await _distil([src], tmp_path / "out")
    assert summary.count("written") == 1
    sent = "\n".join(m.content for r in backend.requests for m in r.messages)
    assert "[NAME]" in sent and "[PHONE]" in sent and "[EMAIL]" in sent and "[ADDRESS]" in sent
    written = "\n".join(
        p.read_text("utf-8")
        for p in (tmp_path / "out").rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml")
    )
    assert "moved out of my flat" in written  # the scrubbed line did reach the output
    for value in PLANTED.values():
        assert value not in sent
        assert value not in written


async def test_skips_failures_duplicates_and_the_batch_goes_on(tmp_path: Path) -> None:
    story = [
        "I lost my job at the printing works after twenty years and I cannot tell my kids",
        "Every morning I still put on my work shoes and then sit in the car",
    ]
    rows = [
        _conv("good", story),
        _conv("near-copy", [story[0].replace("twenty", "twenty-one"), story[1]]),
        _conv("short", ["hi", "ok thanks"]),
        _conv(
            "empty-talk",
            [
                "NOTHING-HERE just testing the chat box, please ignore this line",
                "still testing the widget, nothing else to say",
            ],
        ),
        _conv(
            "broken",
            [
                "FAILME my sister stopped speaking to me after the funeral last spring",
                "I keep writing her messages and deleting them",
            ],
        ),
        _conv(
            "other",
            [
                "My best friend didn't invite me to her wedding and I saw it online",
                "We have been friends since we were seven years old",
            ],
        ),
    ]
    src = _write_jsonl(tmp_path / "c.jsonl", rows)
    summary, _ = await _distil([src], tmp_path / "out")
    status = {i.source_id: (i.status, i.reason) for i in summary.items}
    assert status["good"][0] == "written"
    assert status["other"][0] == "written"
    assert status["near-copy"][0] == "duplicate" and "distilled-good" in status["near-copy"][1]
    assert status["short"][0] == "skipped" and "too short" in status["short"][1]
    assert status["empty-talk"] == ("skipped", "nothing usable: only a test message")
    assert status["broken"][0] == "failed" and "scripted refusal" in status["broken"][1]
    files = sorted(p.stem for p in (tmp_path / "out" / "scenarios").glob("*.yaml"))
    assert files == ["distilled-good", "distilled-other"]
    manifest = json.loads((tmp_path / "out" / "distill.json").read_text("utf-8"))
    assert manifest["counts"] == {"written": 2, "skipped": 2, "failed": 1, "duplicate": 1}
    st = json.loads((tmp_path / "out" / "state" / "broken" / "status.json").read_text("utf-8"))
    assert st["status"] == "failed"


async def test_resume_after_interruption_repeats_no_finished_stage(
    corpus: Path, tmp_path: Path
) -> None:
    fresh_summary, fresh = await _distil([corpus], tmp_path / "fresh")
    total = len(fresh.requests)
    assert fresh_summary.count("written") == 12 and total == 12 * 4
    out = tmp_path / "out"
    with pytest.raises(Interrupted):
        await _distil([corpus], out, make_interrupting(after=17))
    await asyncio.sleep(0.1)  # let the other in-flight items hit the interruption too
    saved = len(list((out / "state").glob("*/*.json"))) - len(
        list((out / "state").glob("*/status.json"))
    )
    assert 0 < saved <= 17
    summary, again = await _distil([corpus], out)
    assert summary.count("written") == 12
    assert len(again.requests) == total - saved
    # a third run is all cache
    _, third = await _distil([corpus], out)
    assert third.requests == []
    before = {p.name: p.read_text("utf-8") for p in (out / "scenarios").iterdir()}
    after = {p.name: p.read_text("utf-8") for p in (tmp_path / "fresh" / "scenarios").iterdir()}
    assert before == after


async def test_distilled_scenarios_run_in_the_sandbox(corpus: Path, tmp_path: Path) -> None:
    rows = _lines(corpus)
    src = _write_jsonl(tmp_path / "c.jsonl", [rows[0], rows[9]])
    await _distil([src], tmp_path / "out")
    loaded = load_scenarios(tmp_path / "out" / "scenarios")
    assert len(loaded.scenarios) == 2
    for scenario in loaded.scenarios:
        roles = Roles(
            user=ModelClient(ScriptedBackend(auto_reply), EndpointConfig(kind="scripted"), "user"),
            judge=ModelClient(
                ScriptedBackend(auto_reply), EndpointConfig(kind="scripted"), "judge"
            ),
            director=None,
            tested=ModelClient(
                ScriptedBackend(auto_reply), EndpointConfig(kind="scripted"), "tested"
            ),
        )
        record = await run_dialogue(
            scenario, roles, SandboxConfig(max_turns=2, min_turns=0, director="rules")
        )
        assert record.termination.kind.value != "error", record.termination
        assert len(record.turns) >= 1
        assert record.scenario_id == scenario.id
