"""The bundled offline model's speed, ours against references, side by side in one run.

Prints, each measured in the same process with ours and the reference interleaved (best and
median of the rounds; wall seconds and this process's CPU seconds, since on a shared machine
the wall figure mostly measures the neighbours):

1. greedy decoding tokens/s: the offline backend's plain chat path against plain
   ``transformers`` ``generate`` on the same model and prompt, and the bandwidth bound (bytes
   of weights per token over a measured memory copy bandwidth);
2. prefill over a 12-turn dialogue's successive prompts (system, history, the new line):
   tokens computed and seconds, with and without the prefix cache;
3. rollout generation as the trainer's (``LocalPolicy.generate``, 4 dialogues in a batch,
   growing prompts): generated tokens per CPU second with and without the prefix cache;
4. ``serve``'s answer to a long prompt like the published runner's judge prompt (about 2,700
   tokens), cold and again with the same fixed part (the offline backend, in process).

    python benchmarks/bench_offline.py [--rounds 3] [--tokens 32] [--turns 12]

The demo's wall time before and after is measured with ``time empathos run`` (docs/run.md).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from empathos.llm.local import load_policy
from empathos.llm.offline import OfflineBackend, load_offline_model
from empathos.llm.offline.batcher import generate_one
from empathos.llm.offline.prefix_cache import PrefixCache
from empathos.llm.types import ChatRequest, Message

SYSTEM = (
    "You play a person who talks about a hard week. Answer the listener in one or two "
    "sentences, in your own words, and say how you feel."
)
LINES = [
    "I missed my train again and my boss noticed.",
    "It is the third time this month, and I am tired of apologising.",
    "My neighbour plays music until two in the morning.",
    "I asked him nicely once, and nothing changed.",
    "So I sleep badly, and then I miss the train.",
    "My sister says I should just move out.",
    "But I cannot afford anything closer to work.",
    "Sometimes I think I should change jobs instead.",
    "I like the people there, though.",
    "And I am good at what I do.",
    "Maybe I just need a better alarm clock.",
    "Thank you for listening, it helps to say it out loud.",
]


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def _dialogue(turns: int) -> list[list[Message]]:
    """Each turn's prompt: the system text, the history so far, the new line."""
    history = [Message(role="system", content=SYSTEM)]
    prompts = []
    for i in range(turns):
        history = [*history, Message(role="user", content=LINES[i % len(LINES)])]
        prompts.append(history)
        history = [*history, Message(role="assistant", content=f"That sounds hard ({i}).")]
    return prompts


def _bandwidth_gbs() -> float:
    """Memory copy bandwidth, GB/s (bytes read plus bytes written), best of 5."""
    src = torch.empty(64 * 2**20, dtype=torch.float32)  # 256 MiB
    dst = torch.empty_like(src)
    best = 0.0
    for _ in range(5):
        t = time.perf_counter()
        dst.copy_(src)
        best = max(best, 2 * src.nbytes / (time.perf_counter() - t) / 1e9)
    return best


def greedy(rounds: int, tokens: int) -> None:
    lm = load_offline_model()
    msgs = [Message(role="system", content=SYSTEM), Message(role="user", content=LINES[0])]
    prompt = lm.prompt_ids([m.model_dump() for m in msgs])
    ids = torch.tensor([prompt])
    request = ChatRequest(
        model="m",
        messages=msgs,
        params={"max_tokens": tokens, "repetition_penalty": 1.0, "no_repeat_ngram": 0},
    )
    eos = int(lm.tokenizer.eos_token_id)

    def reference() -> int:
        with torch.inference_mode():
            out = lm.model.generate(input_ids=ids, max_new_tokens=tokens, min_new_tokens=tokens,
                                    do_sample=False, pad_token_id=eos)  # fmt: skip
        return int(out.shape[1] - ids.shape[1])

    def ours() -> int:
        lm.prefix = PrefixCache(max_bytes=0)  # decoding speed alone: nothing reused
        return generate_one(lm, request).output_tokens

    rows: dict[str, list[tuple[float, float]]] = {"ours": [], "transformers": []}
    for _ in range(rounds):
        for name, fn in (("ours", ours), ("transformers", reference)):
            wall, cpu, n = _timed(fn)
            rows[name].append((n / wall, n / max(cpu, 1e-9)))
    lm.prefix = PrefixCache()
    weight_bytes = sum(p.numel() * p.element_size() for p in lm.model.parameters())
    bw = _bandwidth_gbs()
    bound = bw * 1e9 / weight_bytes
    print(f"\n1. greedy decoding, {tokens} tokens, {rounds} rounds (median; best)")
    print(f"{'':14}{'tokens/s wall':>22}{'tokens/CPU-s':>22}")
    for name, vals in rows.items():
        w, c = [v[0] for v in vals], [v[1] for v in vals]
        mw, mc = statistics.median(w), statistics.median(c)
        print(f"{name:14}{mw:>14.1f} ({max(w):5.1f}){mc:>14.1f} ({max(c):5.1f})")
    ratio = statistics.median(v[1] for v in rows["ours"]) / statistics.median(
        v[1] for v in rows["transformers"]
    )
    print(f"ours / transformers (CPU): {ratio:.2f}x")
    print(f"bandwidth bound: {weight_bytes / 1e6:.0f} MB of weights per token over "
          f"{bw:.1f} GB/s copy bandwidth = {bound:.1f} tokens/s")  # fmt: skip


def prefill(turns: int) -> None:
    lm = load_offline_model()
    prompts = _dialogue(turns)
    results: dict[str, tuple[int, int, float, float]] = {}
    for name, size in (("without cache", 0), ("with cache", 2**28)):
        lm.prefix = PrefixCache(max_bytes=size)
        total = computed = 0
        wall = cpu = 0.0
        for messages in prompts:
            req = ChatRequest(model="m", messages=messages, params={"max_tokens": 1})
            w, c, reply = _timed(lambda req=req: generate_one(lm, req))
            total += reply.input_tokens
            computed += reply.input_tokens - reply.cached_tokens
            wall, cpu = wall + w, cpu + c
        results[name] = (total, computed, wall, cpu)
    lm.prefix = PrefixCache()
    print(f"\n2. prefill of a {turns}-turn dialogue's successive prompts (1 token generated each)")
    print(f"{'':16}{'prompt tokens':>14}{'computed':>10}{'wall s':>9}{'CPU s':>8}")
    for name, (total, computed, wall, cpu) in results.items():
        print(f"{name:16}{total:>14}{computed:>10}{wall:>9.1f}{cpu:>8.1f}")
    (_, a, _, ca), (_, b, _, cb) = results.values()
    print(f"prefill work: {a / max(b, 1):.1f}x less with the cache; "
          f"CPU time {ca / max(cb, 1e-9):.1f}x less")  # fmt: skip


def rollouts(turns: int, tokens: int) -> None:
    policy = load_policy()
    dialogues = [_dialogue(turns) for _ in range(4)]
    for d, dialogue in enumerate(dialogues):  # four different dialogues
        for prompt in dialogue:
            prompt[1] = Message(role="user", content=f"({d}) {prompt[1].content}")
    out = {}
    for name, size in (("without cache", 0), ("with cache", 2**28)):
        policy.prefix = PrefixCache(max_bytes=size)
        generated, cpu = 0, 0.0
        for t in range(turns):
            batch = [policy.prompt_ids(d[t], tokens) for d in dialogues]
            torch.manual_seed(t)
            _, c, gens = _timed(lambda b=batch: policy.generate(b, max_new_tokens=tokens))
            generated += sum(len(g.token_ids) for g in gens)
            cpu += c
        out[name] = generated / max(cpu, 1e-9)
    print(f"\n3. rollouts as the trainer's: 4 dialogues x {turns} turns, {tokens} tokens per reply")
    for name, rate in out.items():
        print(f"{name:16}{rate:>8.1f} generated tokens per CPU-second")
    print(f"with / without: {out['with cache'] / out['without cache']:.2f}x")


def serve_long(tokens: int) -> None:
    lm = load_offline_model()
    lm.prefix = PrefixCache()
    fixed = " ".join(LINES) * 22  # a judge's long fixed instructions and dialogue so far
    backend = OfflineBackend()

    def ask(last: str) -> tuple[float, int, int]:
        msgs = [Message(role="system", content=fixed), Message(role="user", content=last)]
        req = ChatRequest(model="m", messages=msgs, params={"max_tokens": tokens})
        wall, _, reply = _timed(lambda: asyncio.run(backend.complete(req)))
        return wall, reply.input_tokens, reply.cached_tokens

    cold, warm = ask("Rate the listener's last reply."), ask("Rate the listener's reply again.")
    print(f"\n4. serve's long prompt ({cold[1]} tokens, {tokens} tokens of reply)")
    print(f"cold: {cold[0]:.1f} s wall; the next request with the same fixed part: "
          f"{warm[0]:.1f} s ({warm[2]} of {warm[1]} prompt tokens from the cache)")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--only", choices=["greedy", "prefill", "rollouts", "serve"], default=None)
    args = ap.parse_args()
    load_offline_model()
    print(f"torch threads: {torch.get_num_threads()}; load average when started: "
          f"{Path('/proc/loadavg').read_text().split()[0]}")  # fmt: skip
    parts: dict[str, Callable[[], None]] = {
        "greedy": lambda: greedy(args.rounds, args.tokens),
        "prefill": lambda: prefill(args.turns),
        "rollouts": lambda: rollouts(min(args.turns, 6), 16),
        "serve": lambda: serve_long(16),
    }
    for name, part in parts.items():
        if args.only in (None, name):
            part()


if __name__ == "__main__":
    main()
