"""SAGE: the Sentient numbers of the released result files, the released dynamics replayed,
and the dialogue loop on a loopback server against a scripted simulator of known emotion
moves (its score, successes and failures by hand count)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import ScriptedServer, cli
from sage_fixture import FAILURES, FINAL, SCORE, SUCCESSES, USER_TURNS, scripted, write_sage

from empathos.examples import examples_dir
from empathos.sage.copy import read_results, read_sage
from empathos.sage.rules import emotion_band, ended, half_up, move_emotion, parse_analysis

RESULTS = "dataset/deepseek-v3-2024-1227_based_simulator"


def _published(readme: Path) -> dict[str, tuple[float, int, int]]:
    """README leaderboard rows: name -> (score, successes, failures)."""
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", readme.read_text(encoding="utf-8"), re.S):
        cells = re.findall(r"<td>(.*?)</td>", row)
        if len(cells) == 8 and cells[3].replace(".", "").isdigit():
            out[cells[0]] = (float(cells[3]), int(cells[4]), int(cells[5]))
    return out


def test_score_reproduces_the_published_rows(sage_sample: Path) -> None:
    published = _published(sage_sample / "README.md")
    names = {"gpt-4.1": "GPT-4.1", "qwen2.5-72b": "Qwen2.5-72B"}
    result = cli("bench", "sage", "score", sage_sample / RESULTS, "--format", "json")
    assert result.exit_code == 0, result.error
    rows = json.loads(result.stdout)
    assert sorted(r["model"] for r in rows) == sorted(names)
    for row in rows:
        assert (row["score"], row["successes"], row["failures"]) == published[names[row["model"]]]
    csv_out = cli("bench", "sage", "score", sage_sample / RESULTS, "--format", "csv").stdout
    assert csv_out.splitlines()[0].startswith("model,score,successes,failures")


def test_the_released_dialogues_follow_our_dynamics(sage_sample: Path) -> None:
    """Every released dialogue replayed: each emotion is the previous one moved by the
    analyser's change, the final one and its band are the record's, and it stops where our
    stop rules stop it."""
    for file in sorted((sage_sample / RESULTS).glob("*_result.jsonl")):
        for record in read_results(file):
            users = [m for m in record["history"] if m["role"] == "user"]
            point = 40
            assert users[0]["emotion-point"] == 40
            for turn in users[1:]:
                point = move_emotion(point, turn["planning"]["change"])
                assert turn["emotion-point"] == point
            assert (record["emo_point"], record["emo_state"]) == (point, emotion_band(point))
            stops = [ended(u["content"], u["emotion-point"]) for u in users[1:]]
            assert not any(stops[:-1])
            assert stops[-1] or len(users) == 10


def test_the_sample_copy_reads(sage_sample: Path) -> None:
    copy = read_sage(sage_sample)
    assert len(copy.profiles) >= 5 and all(p["first_talk"] for p in copy.profiles)
    assert "{{dialog_history}}" in copy.prompts.analyser
    assert {"key": "TargetCompletion"} in copy.prompts.analysis_parts
    assert copy.prompts.npc_system and set(copy.prompts.speakers) == {"user", "assistant"}


def test_rules() -> None:
    assert half_up(68.15) == 68.2 and half_up(61.25) == 61.3 and round(61.25, 1) == 61.2
    assert move_emotion(95, 30) == 100 and move_emotion(12, -30) == 2
    assert [emotion_band(p) for p in (100, 70, 69, 40, 10, 9)] == [
        "Emotion-S", "Emotion-A", "Emotion-B", "Emotion-B", "Emotion-C", "Emotion-F",
    ]  # fmt: skip
    parsed = parse_analysis(
        "Content：\nx\nTargetCompletion:\ny\n**Activity:**\nz\nAnalyse:\nw\nChange:\n[-25]"
    )
    assert parsed is not None and parsed["change"] == -10 and parsed["activity"] == "z"
    assert parse_analysis("Change: none") is None


def _run(url: str, data: Path, out: Path, *extra: str, model: str = "tested") -> list[str]:
    return [
        "bench", "sage", "--data", str(data), "--model", model, "--base-url", url,
        "--roles-model", "sim", "--roles-base-url", url, "--out", str(out), *extra,
    ]  # fmt: skip


def test_a_scripted_simulator_gives_the_hand_count(tmp_path: Path) -> None:
    data = write_sage(tmp_path / "copy")
    out = tmp_path / "run"
    with ScriptedServer(scripted) as server:
        result = cli(*_run(server.url, data, out))
    assert result.exit_code == 0, result.error
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    assert summary["sage"]["score"] == SCORE
    assert (summary["sage"]["successes"], summary["sage"]["failures"]) == (SUCCESSES, FAILURES)
    rows = json.loads(cli("bench", "sage", "score", out, "--format", "json").stdout)
    assert [(r["model"], r["score"], r["successes"], r["failures"]) for r in rows] == [
        ("tested", SCORE, SUCCESSES, FAILURES)
    ]
    lines = (out / "sage" / "tested_result.jsonl").read_text(encoding="utf-8").splitlines()
    dialogues = [json.loads(line) for line in lines]
    assert [d["id"] for d in dialogues] == ["p1", "p2", "p3", "p4"]  # the profiles' order
    for d in dialogues:
        assert (d["emo_point"], d["emo_state"]) == FINAL[d["id"]]
        users = [m for m in d["history"] if m["role"] == "user"]
        assert len(users) == USER_TURNS[d["id"]]
        assert users[0] == {"role": "user", "content": f"hello from {d['id']}", "emotion-point": 40}
    p3 = dialogues[2]["history"]
    assert len(p3) == 20 and p3[-1] == {"role": "assistant", "content": "reply 10"}
    assert p3[2]["planning"]["change"] == 10  # "+15" clamped
    assert dialogues[0]["history"][-1]["role"] == "user"  # a success ends on the user's turn
    assert dialogues[3]["history"][-1]["content"] == "好的，拜拜"
    record = json.loads((out / "records" / "p1__t0.json").read_text())
    assert record["messages"][0] == {
        "role": "system",
        "content": "You are a kind companion (our own test prompt).",
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["bench"]["files"]) == {
        "SAGE/profile/simulator_profile_withfirsttalk.jsonl", "SAGE/simulator_response.py",
        "SAGE/npc_response.py",
    }  # fmt: skip


def test_the_prompts_are_filled_as_the_released_code_fills_them(tmp_path: Path) -> None:
    data = write_sage(tmp_path / "copy")
    with ScriptedServer(scripted) as server:
        assert cli(*_run(server.url, data, tmp_path / "run", "--limit", "1")).exit_code == 0
    sim = [b["messages"][-1]["content"] for b in server.bodies if b["model"] == "sim"]
    first_analysis, first_reply = sim[0], sim[1]
    assert first_analysis.startswith("ANALYSER for PERSONA p1\ngoal: GOAL: talk it through")
    assert "emotion now: 40\n" in first_analysis
    assert '"role": "Helper",\n    "content": "reply 1"' in first_analysis
    assert "band: Emotion-B\n" in first_reply  # 50 after the first move
    assert "felt: FACTS: partly | INNER: calmerfine\n" in first_reply
    assert 'earlier: []\nlatest: [\n  {\n    "role": "Visitor"' in first_reply


def test_an_endpoint_failure_is_an_item_error(tmp_path: Path) -> None:
    data = write_sage(tmp_path / "copy")
    out = tmp_path / "run"

    def failing(body: dict[str, Any]) -> str | int:
        text = json.dumps(body)
        return 400 if body["model"] == "sim" and "PERSONA p2" in text else scripted(body)

    with ScriptedServer(failing) as server:
        result = cli(*_run(server.url, data, out, "--no-retry-errors"))
    assert result.exit_code == 1
    record = json.loads((out / "records" / "p2__t0.json").read_text())
    assert record["status"] == "error" and record["scores"] == {}
    (summary,) = json.loads(cli("bench", "score", out, "--format", "json").stdout)
    assert summary["errors"] == 1 and summary["sage"]["dialogues"] == 3


def _results(folder: Path, model: str, points: list[int]) -> None:
    rows = [{"id": f"x{i}", "emo_point": p, "emo_state": emotion_band(p), "history": []}
            for i, p in enumerate(points)]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (folder / f"{model}_result.jsonl").write_text(text, encoding="utf-8")


def test_ranks_put_empa_beside_sage(empa_sample: Path, tmp_path: Path) -> None:
    """The sample's three EMPA models (EPM-Q: claude-opus-4.6 > gpt-4o > qwen3-8b) beside
    SAGE scores of our own that swap the last two: rho = 1 - 6 * 2 / (3 * 8) = 0.5."""
    sage = tmp_path / "sage"
    _results(sage, "custom-anthropic-claude-opus-4.6", [100, 40])  # 70
    _results(sage, "Custom-openai-gpt-4o", [40, 40])  # 40
    _results(sage, "custom-qwen-qwen3-8b", [60, 40])  # 50
    _results(sage, "only-on-sage", [0])
    result = cli("bench", "sage", "ranks", "--empa", empa_sample / "results", "--sage", sage,
                 "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.error
    view = json.loads(result.stdout)
    ranks = [(m["empa_rank"], m["sage_rank"], m["sage_score"]) for m in view["models"]]
    assert ranks == [(1, 1, 70.0), (2, 3, 40.0), (3, 2, 50.0)]
    assert view["models"][0]["model"] == "Custom-anthropic/claude-opus-4.6"
    assert view["spearman"] == pytest.approx(0.5)
    assert view["only_sage"] == ["only-on-sage"]


def test_the_report_puts_empa_beside_sage(tmp_path: Path) -> None:
    """SAGE runs of the bundled EMPA examples' two models (EPM-Q: example-warm above
    example-curt), SAGE scoring them the other way round: the report gains the section."""
    data = write_sage(tmp_path / "copy")
    runs = []
    with ScriptedServer(scripted) as server:
        for model, limit in (("example-warm", "2"), ("example-curt", "1")):  # 50 and 100
            out = tmp_path / model
            result = cli(*_run(server.url, data, out, "--limit", limit, model=model))
            assert result.exit_code == 0, result.error
            runs.append(out)
    report = tmp_path / "report"
    result = cli("report", examples_dir(), *runs, "--out", report)
    assert result.exit_code == 0, result.error
    page = (report / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="sec-sage-ranks">') :]
    cells = re.findall(r"<td>(.*?)</td>", section.split("</table>")[0])
    assert cells[0::5] == ["example-warm", "example-curt"]
    assert cells[2::5] == ["1", "2"] and cells[3::5] == ["50.0", "100.0"]
    assert cells[4::5] == ["2", "1"] and "correlation - over 2 models" in section
