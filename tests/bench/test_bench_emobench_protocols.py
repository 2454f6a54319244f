"""EmoBench under its two protocols. ``official``: the benchmark's own script's strict reading
(each of nine common reply shapes gets the credit that script gives it), its prompt layout
(capital letters, the fenced json block, the question type as spelled) and ``/no_think``
for Qwen models. ``paper``: questions asked apart (the cause after the chosen emotion),
majority of 5 samples, 4 fixed choice orders averaged, on a scripted loopback model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_helpers import ScriptedServer, cli, last_user
from emobench_fixture import ACTIONS, CAUSES, EMOTIONS, ITEMS, write_emobench

from empathos.bench.emobench import EmoItem, item_scores
from empathos.bench.emobench_official import item_strict_answers, lenient_only
from empathos.bench.emobench_paper import majority

# An EA question whose right answer is B (the second of three choices): nine reply shapes a
# chat model gives, and whether the benchmark's script credits each (by reading its code).
SHAPES: list[tuple[str, str, bool]] = [
    ("strict JSON", '{"answer": "B"}', True),
    ("fenced json block", 'Sure.\n```json\n{"answer": "B"}\n```', True),
    ("lowercase letter", '{"answer": "b"}', False),
    ("letter with its text", '{"answer": "B) Ask for help"}', False),
    ("the choice's own text", '{"answer": "Ask for help"}', False),
    ("letter in brackets", '{"answer": "(B)"}', False),
    ("single-quoted JSON", "{'answer': 'B'}", False),
    ("unclosed JSON", '{"answer": "B"', False),
    ("prose around JSON", 'My answer is {"answer": "B"} as asked.', False),
]


ITEM = EmoItem("EA", "1", "en", "Kim waits.", "Kim", ((tuple(ACTIONS), ACTIONS[1]),))


@pytest.mark.parametrize(("shape", "reply", "credited"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_reply_shape_gets_the_official_credit(shape: str, reply: str, credited: bool) -> None:
    strict = item_strict_answers(ITEM, reply)
    assert item_scores(ITEM, strict) == {"EA": 1.0 if credited else 0.0}, shape
    # The lenient reader reads every one of them: counted as a diagnostic, never scored.
    assert lenient_only(ITEM, reply, strict) == (0 if credited else 1)


def test_majority_of_votes_and_its_ties() -> None:
    assert majority([2, 1, 2, None, 0]) == 2
    assert majority([1, 2, 2, 1]) == 2  # a tie: the letter that reached 2 first
    assert majority([None, None]) is None


def _item(body: dict[str, Any]) -> str:
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return first_user.split(":")[0].removeprefix("Case ")


def _shown(text: str) -> list[str]:
    return [line[3:] for line in text.splitlines() if line[1:3] == ") "]


def test_the_official_protocol_reads_strictly_and_counts_lenient_only(tmp_path: Path) -> None:
    data = write_emobench(tmp_path / "EmoBench")
    replies = {"a1": '{"answer": "b"}', "a2": '{"answer": "C) Leave the room"}'}

    def model(body: dict[str, Any]) -> str:
        name = _item(body)
        if name in replies:
            return replies[name]
        if ITEMS[name][1] == "EA":
            return json.dumps({"answer": "ABC"[ITEMS[name][2][0]]})
        return "```json\n" + json.dumps({"answer_q1": "A", "answer_q2": "A"}) + "\n```"

    with ScriptedServer(model) as server:
        done = cli("bench", "emobench", "--data", data, "--model", "Qwen/Qwen3-8B",
                   "--base-url", server.url, "--out", tmp_path / "run")  # fmt: skip
        assert done.exit_code == 0, done.error
        bodies = list(server.bodies)
    assert len(bodies) == len(ITEMS)  # one sample per item, no retry
    assert {b["temperature"] for b in bodies} == {0.6}
    system = bodies[0]["messages"][0]["content"]
    assert system.startswith("/no_think\n\nPick the best option")
    assert '\n```json\n    {\n    "' in system and "\n    }\n``` \n    " in system
    ea = next(last_user(b) for b in bodies if _item(b) == "a1")
    assert "Best Action for Kim?" in ea and "A) Wait quietly\nB) Ask for help" in ea
    records = {
        json.loads(f.read_text())["item_id"]: json.loads(f.read_text())
        for f in (tmp_path / "run" / "records").glob("*.json")
    }
    a1, a2 = records["EA-en-6"], records["EA-en-7"]
    assert a1["scores"] == {"EA": 0.0} and a1["detail"]["lenient_only"] == 1  # "b": right
    assert a2["scores"] == {"EA": 0.0} and a2["detail"]["lenient_only"] == 1
    assert records["EA-zh-8"]["scores"] == {"EA": 1.0}
    assert records["EU-en-1"]["protocol"] == "official"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["bench"]["protocol"] == "official"
    (summary,) = json.loads(cli("bench", "score", tmp_path / "run", "--format", "json").stdout)
    assert summary["protocol"] == "official" and summary["lenient_only"] == 2
    # Not a Qwen model: no /no_think.
    with ScriptedServer(model) as server:
        cli("bench", "emobench", "--data", data, "--model", "base", "--base-url", server.url,
            "--out", tmp_path / "plain", "--limit", "1")  # fmt: skip
        assert server.bodies[0]["messages"][0]["content"].startswith("Pick the best option")


def _paper_model(body: dict[str, Any]) -> str:
    """Knows every right answer (by its text) on samples 0-2; says A on samples 3-4; and on
    item e2 says A on every sample (a position-biased answer)."""
    name = _item(body)
    _, kind, labels, _ = ITEMS[name]
    question = sum(m["role"] == "user" for m in body["messages"]) - 1
    gold = (EMOTIONS, CAUSES)[question][labels[question]] if kind == "EU" else ACTIONS[labels[0]]
    shown = _shown(last_user(body))
    if name == "e2" or body["seed"] >= 3:
        return json.dumps({"answer": "A"})
    return json.dumps({"answer": "ABCD"[shown.index(gold)]})


def test_the_paper_protocol_asks_apart_votes_and_averages_fixed_orders(tmp_path: Path) -> None:
    data = write_emobench(tmp_path / "EmoBench")
    with ScriptedServer(_paper_model) as server:
        done = cli("bench", "emobench", "--data", data, "--model", "m", "--base-url", server.url,
                   "--out", tmp_path / "paper", "--protocol", "paper", "--limit", "2")  # fmt: skip
        assert done.exit_code == 0, done.error
        bodies = list(server.bodies)
    assert len(bodies) == 2 * 4 * (5 + 5)  # 2 EU items, 4 orders, 5 samples per question
    assert sorted({b["seed"] for b in bodies}) == [0, 1, 2, 3, 4]
    cause = next(b for b in bodies if len(b["messages"]) == 4)
    roles = [m["role"] for m in cause["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "Why?" in cause["messages"][3]["content"]
    assert "Feeling of Kim?" not in cause["messages"][3]["content"]
    chosen = json.loads(cause["messages"][2]["content"])["answer"]
    shown = _shown(cause["messages"][1]["content"])
    assert shown[ord(chosen) - 65] == EMOTIONS[ITEMS[_item(cause)][2][0]]  # the majority pick
    recs = [json.loads(f.read_text()) for f in (tmp_path / "paper" / "records").glob("*.json")]
    by_id = {r["item_id"]: r for r in recs}
    e1, e2 = by_id["EU-en-1"], by_id["EU-en-2"]
    assert e1["scores"] == {"EU emotion": 1.0, "EU cause": 1.0, "EU both": 1.0}  # 3 of 5 right
    orders = [o["order"] for o in e2["detail"]["orders"]]
    assert orders[0] == [[0, 1, 2, 3], [0, 1, 2]]  # the data's own order first
    assert len({json.dumps(o) for o in orders}) == 4
    # e2 always says A: right in the orders that show the right answer first.
    gold = ITEMS["e2"][2]
    at_a = [o[0][0] == gold[0] for o in orders]
    assert e2["scores"]["EU emotion"] == pytest.approx(sum(at_a) / 4)
    both = [o[0][0] == gold[0] and o[1][0] == gold[1] for o in orders]
    assert e2["scores"]["EU both"] == pytest.approx(sum(both) / 4)
    (summary,) = json.loads(cli("bench", "score", tmp_path / "paper", "--format", "json").stdout)
    assert summary["protocol"] == "paper"
    # The orders are fixed: a second run draws the same ones.
    with ScriptedServer(_paper_model) as server:
        cli("bench", "emobench", "--data", data, "--model", "m", "--base-url", server.url,
            "--out", tmp_path / "again", "--protocol", "paper", "--limit", "2")  # fmt: skip
    again = next(
        json.loads(f.read_text())
        for f in (tmp_path / "again" / "records").glob("*.json")
        if json.loads(f.read_text())["item_id"] == "EU-en-2"
    )
    assert [o["order"] for o in again["detail"]["orders"]] == orders
    # An official run of the same items is not compared with it.
    with ScriptedServer(_paper_model) as server:
        cli("bench", "emobench", "--data", data, "--model", "m", "--base-url", server.url,
            "--out", tmp_path / "official", "--limit", "2")  # fmt: skip
    refused = cli("bench", "compare", tmp_path / "official", tmp_path / "paper")
    assert refused.exit_code == 2 and refused.error is not None
    assert "paper protocol" in refused.error and "official" in refused.error
