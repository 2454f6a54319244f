"""SAGE on the benchmark protocol: its items (the profiles of the user's copy), one dialogue
played against the model under test and the simulated user, its values and numbers, its
published result files, its result files written in SAGE's own layout, and its known
differences from SAGE's code.

The roles: ``model_under_test`` (the model answering the simulated user) and ``user`` (the
simulator, both its calls; ``--roles-model``/``--roles-base-url`` or ``roles.user``). A
failed call ends the dialogue as ``status: "error"`` (never a low emotion).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from empathos.bench.play import BenchCase, Roles
from empathos.bench.protocol import (
    Benchmark,
    Command,
    Defaults,
    PublishedFiles,
    PublishedRow,
    TableData,
    Values,
    per_item,
)
from empathos.bench.record import BenchItemRecord, ChatTurn
from empathos.errors import ModelCallError
from empathos.llm import ChatModel, Message, record_of
from empathos.records import ModelCallRecord
from empathos.run.manifest import read_manifest, utc_now
from empathos.sage.copy import read_sage, scored_results
from empathos.sage.rules import (
    MAX_USER_TURNS,
    START_EMOTION,
    SimulatorPrompts,
    analyser_prompt,
    emotion_band,
    ended,
    move_emotion,
    npc_messages,
    parse_analysis,
    parse_user_reply,
    reply_prompt,
    sentient_score,
)
from empathos.sandbox.agents import call_record

__all__ = ["SAGE", "SageBench", "play_sage", "result_layout", "write_results"]

#: Times the analyser is asked when its answer has no ``Change:`` integer.
ANALYSER_ATTEMPTS = 3


class _NoChange(Exception):
    """The analyser's answers had no ``Change:`` integer."""


async def _call(
    model: ChatModel, messages: list[dict[str, str]], calls: list[ModelCallRecord], turn: int
) -> str:
    sent = [Message.model_validate(m) for m in messages]
    try:
        result = await model.chat(sent, allow_empty=True)
    except ModelCallError as exc:
        failed = record_of(exc)
        if failed is not None:
            calls.append(call_record(failed, turn=turn, prompt=None, messages=sent))
        raise
    calls.append(call_record(result.record, turn=turn, prompt=None, messages=sent))
    return result.text


async def _analyse(
    sim: ChatModel, prompt: str, calls: list[ModelCallRecord], turn: int
) -> dict[str, Any]:
    for _ in range(ANALYSER_ATTEMPTS):
        answer = await _call(sim, [{"role": "user", "content": prompt}], calls, turn)
        analysis = parse_analysis(answer)
        if analysis is not None:
            return analysis
    raise _NoChange


def result_layout(
    profile: dict[str, Any], point: int, history: list[dict[str, Any]]
) -> dict[str, Any]:
    """One dialogue as a line of SAGE's result files."""
    return {
        "id": profile["id"], "emo_point": point, "emo_state": emotion_band(point),
        "target": "eq", "player": profile["player"], "scene": profile["scene"],
        "character": profile["main_cha"], "topic": profile.get("topic", ""),
        "task": profile["task"], "history": history,
    }  # fmt: skip


async def _dialogue(
    profile: dict[str, Any], prompts: SimulatorPrompts, roles: Roles,
    history: list[dict[str, Any]], calls: list[ModelCallRecord],
) -> int:  # fmt: skip
    """Play the dialogue into ``history``; its final emotion."""
    assert roles.simulator is not None
    point = START_EMOTION
    history.append({"role": "user", "content": profile["first_talk"], "emotion-point": point})
    for turn in range(1, MAX_USER_TURNS + 1):
        if turn > 1:
            analysis = await _analyse(
                roles.simulator, analyser_prompt(prompts, profile, point, history), calls, turn
            )
            point = move_emotion(point, analysis["change"])
            prompt = reply_prompt(prompts, profile, emotion_band(point), history, analysis)
            answer = await _call(
                roles.simulator, [{"role": "user", "content": prompt}], calls, turn
            )
            thinking, text = parse_user_reply(answer)
            history.append({"role": "user", "content": text, "thinking": thinking,
                            "emotion-point": point, "planning": analysis})  # fmt: skip
            if ended(text, point):
                break
        reply = await _call(roles.tested, npc_messages(prompts.npc_system, history), calls, turn)
        history.append({"role": "assistant", "content": reply})
    return point


async def play_sage(case: BenchCase, roles: Roles) -> BenchItemRecord:
    """One SAGE dialogue (docs/bench.md, "SAGE"): the record, its ``sage`` the dialogue in
    SAGE's layout and its ``scores`` the final emotion."""
    profile: dict[str, Any] = case.item
    prompts: SimulatorPrompts = case.prompts
    history: list[dict[str, Any]] = []
    calls: list[ModelCallRecord] = []
    status, error, point = "done", None, START_EMOTION
    try:
        point = await _dialogue(profile, prompts, roles, history, calls)
    except ModelCallError as exc:
        status, error = "error", exc.line()
    except _NoChange:
        status = "error"
        error = f"the simulator's analysis had no Change value ({ANALYSER_ATTEMPTS} answers)"
    turns = [ChatTurn(role=m["role"], content=m["content"])
             for m in npc_messages(prompts.npc_system, history)]  # fmt: skip
    return BenchItemRecord(
        bench="sage", item_id=case.id, item_hash=case.digest, language=case.language,
        task=case.task, model=roles.label, status=status, error=error, messages=turns,
        sage=result_layout(profile, point, history),
        scores={"emotion": float(point)} if status == "done" else {},
        model_calls=calls, finished_at=utc_now(),
    )  # fmt: skip


def _digest(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "model"


def write_results(
    out: Path, records: Iterable[BenchItemRecord], order: Sequence[str]
) -> Path | None:
    """``<out>/sage/<model>_result.jsonl``: the finished dialogues in SAGE's own layout, in
    the profiles' order (what ``empathos bench sage score`` and SAGE's readers read)."""
    done = {r.item_id: r for r in records if r.status == "done" and r.sage is not None}
    if not done:
        return None
    model = next(iter(done.values())).model
    rank = {item: i for i, item in enumerate(order)}
    path = out / "sage" / f"{_slug(model)}_result.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(done[i].sage, ensure_ascii=False) + "\n"
             for i in sorted(done, key=lambda i: (rank.get(i, len(rank)), i))]  # fmt: skip
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(path)
    return path


def _published_cells(row: dict[str, Any]) -> tuple[str, ...]:
    score = "-" if row["score"] is None else f"{row['score']:.1f}"
    mean = "-" if row["mean"] is None else f"{row['mean']:.3f}"
    return (row["model"], score, str(row["successes"]), str(row["failures"]),
            str(row["dialogues"]), mean)  # fmt: skip


class SageBench(Defaults):
    """SAGE behind the benchmark protocol (:class:`empathos.bench.protocol.Benchmark`;
    registered in :data:`empathos.bench.registry.REGISTRY`)."""

    name = "sage"
    roles: tuple[str, ...] = ("model_under_test", "user")
    warn_offline: tuple[str, ...] = ("user",)
    note = "SAGE: the mean final emotion (0-100)"
    about = "SAGE: a simulated user (the user role) whose emotion the replies move."
    data_help = "Your copy of SAGE (a clone of Tencent/digitalhuman or its SAGE/ folder)."
    command = Command(
        group_help="SAGE (Sentient Agent as a Judge): a simulated user whose emotion the model "
        "moves. Without a sub-command: run it (the options below); `score`: the Sentient "
        "numbers of result files; `ranks`: EMPA and SAGE ranks side by side.",
    )
    published: PublishedFiles | None = PublishedFiles(
        help="Each model's Sentient numbers: score (mean final emotion, half up to 0.1), "
        "successes (Emotion-S dialogues) and failures (Emotion-F dialogues).",
        paths="SAGE result files (*_result.jsonl), folders of them, or `bench sage` runs.",
        title="SAGE: Sentient numbers of result files",
        columns=("model", "score", "successes", "failures", "dialogues", "mean"),
        fields=("model", "score", "successes", "failures", "dialogues", "mean", "file"),
    )
    differences: tuple[str, ...] = (
        "The analyser's prompt gets the conversation goal (target_prompt) in its {{target}} "
        "slot; the released planning_reply indexes the string with player_data['target'], "
        "which player_init never sets, and would stop there.",
        "The profile's fields are read from profile/simulator_profile_withfirsttalk.jsonl "
        "(the released player_init reads simulator_profile.jsonl, which holds the same "
        "profiles without first_talk); a missing topic is written as '' (the released "
        "profiles have none, and player_init would fail on it).",
        "An analysis without a Change integer is asked again up to 3 times, then the dialogue "
        "is an error; the released code asks again forever, 3 s apart. With the call cache "
        "on, a repeated prompt gets the same answer.",
        "A failed call (after the client's retries) ends the dialogue as an error, left out "
        "of the numbers; the released code retries the simulator forever and has no retry "
        "for the model under test.",
        "Sampling (temperature, max tokens) is the endpoints' config; the released code leaves "
        "call_llm to the user.",
    )

    def cases(self, data: Path, protocol: str = "") -> tuple[list[BenchCase], list[Path]]:
        """Every profile of the copy as a case (play: :func:`play_sage`)."""
        copy = read_sage(data)
        cases = [
            BenchCase(p["id"], _digest(p, copy.prompts), "sage", None, p["main_cha"],
                      play_sage, p, copy.prompts)
            for p in copy.profiles
        ]  # fmt: skip
        return cases, copy.files

    def values(self, records: Sequence[BenchItemRecord]) -> Values:
        """The final emotion (0-100) of each finished dialogue."""
        return per_item(records, "emotion", "emotion", 1.0)

    def summary(self, records: Sequence[BenchItemRecord]) -> dict[str, Any]:
        """Score, successes and failures over the finished dialogues."""
        s = sentient_score([r.sage for r in records if r.status == "done" and r.sage])
        return {"sage": {"score": s.score, "mean": s.mean, "successes": s.successes,
                         "failures": s.failures, "dialogues": s.dialogues}}  # fmt: skip

    def tables(self, parts: dict[str, Any]) -> tuple[str | None, list[TableData]]:
        """The Sentient numbers as the caption."""
        shown = {k: "-" if v is None else f"{v:g}" if isinstance(v, float) else v
                 for k, v in parts["sage"].items()}  # fmt: skip
        return ", ".join(f"{k} {v}" for k, v in shown.items()), []

    def metrics(self, records: Sequence[BenchItemRecord]) -> dict[str, float]:
        """The Sentient score, successes and failures (the Inspect task's metrics)."""
        parts = self.summary(records)["sage"]
        return {k: float(parts[k]) for k in ("score", "successes", "failures")
                if parts[k] is not None}  # fmt: skip

    def read_published(self, path: Path, data: Path | None = None) -> list[PublishedRow]:
        """Each result file at ``path`` (a file, a folder of them, a run directory): its
        model (the file's name less ``_result.jsonl``) and its numbers."""
        rows = []
        for file, model, s in scored_results(path):
            row = {"file": str(file), "model": model, "score": s.score, "mean": s.mean,
                   "successes": s.successes, "failures": s.failures,
                   "dialogues": s.dialogues}  # fmt: skip
            rows.append(PublishedRow(row, _published_cells(row)))
        return rows

    def own_layout(self, out: Path) -> Path | None:
        """The run's finished dialogues in SAGE's layout (:func:`write_results`)."""
        from empathos.bench.summary import load_bench_dir

        bench = load_bench_dir(out) if (out / "records").is_dir() else None
        manifest = read_manifest(out) if bench is not None else None
        if bench is None or manifest is None:
            return None
        return write_results(out, bench.records, [s.id for s in manifest.scenarios])

    def beside_empa(self, empa: Sequence[Path], runs: Sequence[Path], preset: str) -> str:
        """EMPA beside SAGE: both ranks and Spearman's correlation (docs/bench.md, "SAGE")."""
        from empathos.bench.sage_ranks import report_section

        return report_section(empa, runs, preset)


SAGE = SageBench()
_CHECKED: Benchmark = SAGE  # SageBench keeps to the protocol (mypy checks it)
