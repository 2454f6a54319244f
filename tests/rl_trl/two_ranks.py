"""One rank of a two-process rollout on the CPU (gloo), run by test_trl_two_processes.py:
``python two_ranks.py RANK PORT OUT``.

The two processes share one vLLM engine in server mode as TRL 1.16 drives it: TRL's own
``VLLMGeneration.generate`` (gather of every rank's prompts, one request from the main
process, broadcast, each rank's slice) with TRL's own ``VLLMClient`` talking HTTP to a loopback
server on rank 0, which answers ``/v1/completions`` as vLLM does and records each request's
``max_tokens``. Its replies never end, so every reply is cut at the cap it was given. The
ranks ask for different reply caps (3 and 9 tokens): what the engine receives, and each
rank's replies, are written to ``OUT/rank<RANK>.json``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

CAPS = (3, 9)  # max_reply_tokens of rank 0 and rank 1
ROWS = 2  # dialogues per rank


class _Engine(BaseHTTPRequestHandler):
    """vLLM's ``/v1/completions`` with token ids: every reply is ``max_tokens`` copies of
    one ordinary token."""

    requests: ClassVar[list[dict[str, Any]]] = []
    token = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        asked = {"max_tokens": body["max_tokens"], "prompts": len(body["prompt"])}
        type(self).requests.append(asked)
        n, tok = int(body.get("n", 1)), type(self).token
        choices = [
            {
                "prompt_token_ids": prompt,
                "token_ids": [tok] * body["max_tokens"],
                "logprobs": {"content": [
                    {"token": f"token_id:{tok}", "logprob": -0.5,
                     "top_logprobs": [{"token": f"token_id:{tok}", "logprob": -0.5}]}
                ] * body["max_tokens"]},
            }
            for prompt in body["prompt"]
            for _ in range(n)
        ]  # fmt: skip
        data = json.dumps({"choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        del args


def _client(url: str) -> Any:
    """TRL's ``VLLMClient`` on the loopback server (its constructor refuses to run without
    vLLM installed, so its fields are set as the constructor sets them)."""
    import requests
    from trl.generation.vllm_client import VLLMClient

    client = VLLMClient.__new__(VLLMClient)
    client.session, client.base_url, client.model = requests.Session(), url, "policy"
    client.communicator, client._updating_weights = None, False
    return client


def _engine(accelerator: Any, client: Any) -> Any:
    """TRL's ``VLLMGeneration`` in server mode, with the fields its constructor sets."""
    from trl.generation.vllm_generation import VLLMGeneration

    engine = VLLMGeneration.__new__(VLLMGeneration)
    engine.__dict__.update(
        accelerator=accelerator, mode="server", temperature=1.0, top_p=1.0, top_k=0, min_p=None,
        repetition_penalty=1.0, max_completion_length=64, logprobs=0,
        structured_outputs_regex=None, generation_kwargs={}, enable_sleep_mode=False,
        vllm_client=client,
    )  # fmt: skip
    return engine


def main(rank: int, port: int, out: Path) -> None:
    world = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), MASTER_PORT=str(port), **world)
    from accelerate import Accelerator
    from transformers import AutoTokenizer
    from trl_run import roles

    from empathos.integrations.trl import empa_rollout_func
    from empathos.llm.local import resolve_model_dir
    from empathos.sandbox import SandboxConfig
    from empathos.scenarios import load_builtin

    accelerator = Accelerator(cpu=True)
    assert accelerator.num_processes == 2 and accelerator.process_index == rank
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_dir(None, None, "policy")[0])
    _Engine.token = int(tokenizer(" you", add_special_tokens=False)["input_ids"][0])
    client = None
    if rank == 0:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Engine)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        client = _client(f"http://127.0.0.1:{server.server_address[1]}")
    trainer = SimpleNamespace(
        accelerator=accelerator, use_vllm=True, vllm_mode="server", vllm_tensor_parallel_size=1,
        vllm_generation=_engine(accelerator, client), state=SimpleNamespace(global_step=0),
        model=SimpleNamespace(training=True, name_or_path="policy"), max_completion_length=256,
        processing_class=tokenizer, eos_token_ids=[tokenizer.eos_token_id],
    )  # fmt: skip
    scenario = next(s for s in load_builtin().scenarios if s.labels.language == "en")
    sandbox = SandboxConfig(max_turns=2, min_turns=2, eval_every=1, system_prompt="none",
                            director="rules")  # fmt: skip
    rollout = empa_rollout_func([scenario], roles(), sandbox, max_reply_tokens=CAPS[rank])
    result = rollout([scenario.id] * ROWS, trainer)
    replies = [[e - s for s, e in spans] for spans in result["turn_spans"]]
    record = {"replies": replies, "engine": _Engine.requests if rank == 0 else None}
    (out / f"rank{rank}.json").write_text(json.dumps(record))
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
