"""Two processes sharing one vLLM engine (server mode) on the CPU with gloo: one reply cap per
round, the largest any rank asked for, so no rank's replies are cut to another rank's room
(``two_ranks.py`` runs each rank: TRL's own ``VLLMGeneration`` and ``VLLMClient``, a
loopback engine)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from two_ranks import CAPS, ROWS

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ranks_agree_on_the_largest_reply_cap_before_the_shared_engine_samples(
    tmp_path: Path,
) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path]),
           "TRL_EXPERIMENTAL_SILENCE": "1", "OMP_NUM_THREADS": "1"}  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "two_ranks.py"), str(rank), str(port), str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in (0, 1)
    ]
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(x[-3000:] for x in logs)
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    engine = ranks[0]["engine"]
    assert len(engine) == 2, "one engine request per round (two turns), all ranks' prompts"
    assert all(r["prompts"] == 2 * ROWS for r in engine)
    assert [r["max_tokens"] for r in engine] == [max(CAPS)] * 2, "the largest cap of any rank"
    for rank, cap in enumerate(CAPS):
        replies = ranks[rank]["replies"]
        assert replies == [[cap, cap]] * ROWS, f"rank {rank}'s replies are cut at its own cap"
