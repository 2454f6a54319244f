"""Every resume is the same in every process: `run`, `rejudge`, `bench emobench` and
`compare --pairwise` made under one PYTHONHASHSEED resume under others with nothing to redo.

One interpreter per hash seed plays all four commands (their CLI in that process), so the
test costs a few interpreter start-ups; the models are scripted (run, rejudge) or a loopback
server (bench, pairwise) that counts the calls. EmoBench's prompts are read into dicts built
from a set of task kinds, whose order follows the hash seed: the seeds below order that set
both ways, so a fingerprint made from ``repr`` would refuse (or redo) the rerun."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import yaml
from bench_helpers import Outcome, cli
from emobench_fixture import answer, write_emobench

from empathos.llm.testing import LoopbackServer, completion_body, read_request

#: {"EU", "EA"} iterates as EU, EA under seed 1 and as EA, EU under seed 2.
SEEDS = ("1", "2")
ROLES = ("user", "director", "judge", "model_under_test")
VERDICT = {"winner": "first", "margin": 2}
FORM = json.dumps(
    {"reasoning": "scripted", **{a: VERDICT for a in ("cognitive", "affective", "proactive")}}
    | {"overall": VERDICT}
)

DRIVER = """
import json, sys
from typer.testing import CliRunner
from empathos.cli.main import app
work, url = sys.argv[1], sys.argv[2]
commands = {
    "run": ["run", "--config", f"{work}/run.yaml", "--out", f"{work}/run"],
    "rejudge": ["rejudge", f"{work}/run", "--out", f"{work}/rejudged"],
    "bench": ["bench", "emobench", "--data", f"{work}/EmoBench", "--model", "m",
              "--base-url", url, "--out", f"{work}/emo"],
    "pairwise": ["compare", "--pairwise", f"{work}/pa", f"{work}/pb", "--out", f"{work}/pw",
                 "--judge-model", "j", "--judge-base-url", url, "--bootstrap", "10"],
}
out = {}
for name, args in commands.items():
    res = CliRunner().invoke(app, args)
    out[name] = [res.exit_code, res.output, repr(res.exception)]
print(json.dumps(out))
"""


class Server(LoopbackServer):
    """EmoBench items answered right; a pairwise prompt answered with our judge's form."""

    def __init__(self) -> None:
        super().__init__("hash-seed-server")
        self.calls = 0
        self._lock = threading.Lock()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _, _, raw = await read_request(reader)
            body = json.loads(raw)
            with self._lock:
                self.calls += 1
            text = body["messages"][-1]["content"]
            pairwise = "# The first dialogue" in text
            reply = FORM if pairwise else answer(body, all_right=True)
            data = json.dumps(completion_body(str(reply), None, body["model"])).encode()
            head = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n"
            writer.write(head + b"content-length: %d\r\n\r\n%b" % (len(data), data))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def _transcripts(folder: Path, model: str) -> None:
    folder.mkdir()
    lines = []
    for s in ("s1", "s2"):
        msgs = [{"role": "user", "content": f"[{s}] hello"}]
        msgs.append({"role": "assistant", "content": f"{model} answers {s}"})
        lines.append(json.dumps({"scenario_id": s, "model": model, "transcript": msgs}))
    (folder / "transcripts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _work(tmp: Path) -> None:
    write_emobench(tmp / "EmoBench")
    roles = {r: {"kind": "scripted", "model": f"scripted-{r}"} for r in ROLES}
    config = {"roles": roles, "cases": "en-01-sourdough", "max_turns": 3}
    (tmp / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    _transcripts(tmp / "pa", "a")
    _transcripts(tmp / "pb", "b")


def _play(tmp: Path, url: str, seed: str) -> dict[str, list[Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATHOS_")}
    env |= {"PYTHONHASHSEED": seed, "COLUMNS": "200", "EMPATHOS_TORCH_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp), url],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    played: dict[str, list[Any]] = json.loads(done.stdout.splitlines()[-1])
    return played


def _files(tmp: Path) -> dict[str, int]:
    """Every record and journal the four commands wrote, with its modification time."""
    found: dict[str, int] = {}
    for sub in ("run/records", "rejudged/records", "emo/records"):
        found |= {str(p): p.stat().st_mtime_ns for p in (tmp / sub).glob("*.json")}
    found[str(tmp / "pw/judgements.jsonl")] = (tmp / "pw/judgements.jsonl").stat().st_mtime_ns
    return found


def test_every_resume_is_the_same_under_every_hash_seed(tmp_path: Path) -> None:
    _work(tmp_path)
    with Server() as server:
        first = _play(tmp_path, server.url, SEEDS[0])
        for name, (code, output, exc) in first.items():
            assert code == 0, (name, output, exc)
        paid, before = server.calls, _files(tmp_path)
        assert paid == 9 + 4  # nine EmoBench items, two scenarios x two orders
        assert len(before) == 1 + 1 + 9 + 1
        for seed in SEEDS[1:]:
            again = _play(tmp_path, server.url, seed)
            for name, (code, output, exc) in again.items():
                assert code == 0, (seed, name, output, exc)
            assert "0 of 9 item(s) to run" in again["bench"][1], again["bench"][1]
            assert server.calls == paid, seed  # nothing paid for twice
            assert _files(tmp_path) == before, seed  # no record written again


def _bench(tmp: Path, url: str, model: str = "m") -> Outcome:
    return cli("bench", "emobench", "--data", tmp / "EmoBench", "--model", model,
               "--base-url", url, "--out", tmp / "emo")  # fmt: skip


def test_a_changed_config_names_what_changed_and_keeps_the_records(tmp_path: Path) -> None:
    """The refusal names the part that differs and does not advise deleting paid results."""
    write_emobench(tmp_path / "EmoBench")
    with Server() as server:
        assert _bench(tmp_path, server.url).exit_code == 0
        other = _bench(tmp_path, server.url, "other")
    assert other.exit_code == 2 and other.error is not None
    assert "differs in: roles.model_under_test" in other.error
    assert "records are kept" in other.error and "pass --force" not in other.error
    assert len(list((tmp_path / "emo/records").glob("*.json"))) == 9


def test_a_run_made_before_canonical_item_hashes_resumes(tmp_path: Path) -> None:
    """Items hashed the old way (other digests) over byte-identical data files resume: only
    how the hash is made changed, so the paid answers are kept, not refused."""
    write_emobench(tmp_path / "EmoBench")
    with Server() as server:
        assert _bench(tmp_path, server.url).exit_code == 0
        paid = server.calls
        for rec in (tmp_path / "emo/records").glob("*.json"):
            data = json.loads(rec.read_text(encoding="utf-8"))
            data["item_hash"] = "0" * 16
            rec.write_text(json.dumps(data), encoding="utf-8")
        (tmp_path / "emo/index.sqlite").unlink()
        again = _bench(tmp_path, server.url)
        assert again.exit_code == 0, again.error
        assert server.calls == paid
        (tmp_path / "EmoBench/data/EA.jsonl").write_text("", encoding="utf-8")
        changed = _bench(tmp_path, server.url)  # now the data did change: refused
    assert changed.exit_code == 2 and changed.error is not None
    assert "scenario content changed" in changed.error and "records are kept" in changed.error
