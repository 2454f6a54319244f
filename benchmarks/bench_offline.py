"""The bundled offline model's speed, ours against references, side by side in one run.

"Before" is the offline model as it was before issue 36: one torch thread, float32, no prefix
cache; "now" is the default (every usable core up to four, float32, the cache). Prints:

1. greedy decoding tokens/s (wall, median and best of the rounds, interleaved): the offline
   backend's plain chat path before, now, and now in bfloat16, against plain ``transformers``
   ``generate`` on the same model with one thread and the default threads, and the bandwidth
   bound (bytes of weights per token over a measured memory copy bandwidth);
2. prefill over a 12-turn dialogue's successive prompts (system, history, the new line):
   tokens computed and seconds, with and without the prefix cache;
3. rollout generation as the trainer's (``LocalPolicy.generate``, 4 dialogues in a batch,
   growing prompts), before and now: generated tokens per second and per CPU-second;
4. ``serve``'s answer to a long prompt like the published runner's judge prompt (about 2,700
   tokens), cold before and now, and again with the same fixed part (the offline backend, in
   process).

    python benchmarks/bench_offline.py [--rounds 3] [--tokens 32] [--turns 12]

Run it on an idle machine: the threads' gain turns into a loss when other processes keep the
cores busy. The demo's wall time before and after is measured with ``time empathos run``
(docs/run.md).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from empathos.llm.local import load_policy
from empathos.llm.offline import OfflineBackend, load_offline_model
from empathos.llm.offline.batcher import generate_one
from empathos.llm.offline.model import torch_threads
from empathos.llm.offline.model_thread import run_on_model_thread
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


def _timed_on(threads: int, fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """:func:`_timed` on the model thread with ``threads`` torch threads, as the backends run
    (every other thread keeps one: docs/models.md, "Threads")."""
    kept = os.environ.get("EMPATHOS_TORCH_THREADS")
    os.environ["EMPATHOS_TORCH_THREADS"] = str(threads)
    try:
        return run_on_model_thread(_timed, fn)
    finally:
        if kept is None:
            del os.environ["EMPATHOS_TORCH_THREADS"]
        else:
            os.environ["EMPATHOS_TORCH_THREADS"] = kept


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
    """Memory copy bandwidth with torch's current threads, GB/s (bytes read plus written), best
    of 5."""
    src = torch.empty(64 * 2**20, dtype=torch.float32)  # 256 MiB
    dst = torch.empty_like(src)
    best = 0.0
    for _ in range(5):
        t = time.perf_counter()
        dst.copy_(src)
        best = max(best, 2 * src.nbytes / (time.perf_counter() - t) / 1e9)
    return best


def _settings(threads: int) -> list[tuple[str, str, int]]:
    """(row name, weights, threads): one thread in float32 was the default before issue 36."""
    rows = [("ours, before", "float32", 1), (f"ours, {threads} threads", "float32", threads)]
    return [*rows, (f"ours, {threads} thr bf16", "bfloat16", threads)]


def greedy(rounds: int, tokens: int) -> None:
    """Ours (the offline backend's plain path) in each setting, against ``transformers``
    ``generate`` on the same model, one thread and the default threads, interleaved."""
    lm = load_offline_model()
    threads = torch_threads()
    models = {"float32": lm.model, "bfloat16": copy.deepcopy(lm.model).to(torch.bfloat16)}
    msgs = [Message(role="system", content=SYSTEM), Message(role="user", content=LINES[0])]
    ids = torch.tensor([lm.prompt_ids([m.model_dump() for m in msgs])])
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

    def ours(weights: str) -> int:
        lm.model = models[weights]
        lm.prefix = PrefixCache(max_bytes=0)  # decoding speed alone: nothing reused
        try:
            return generate_one(lm, request).output_tokens
        finally:
            lm.model = models["float32"]

    runs: list[tuple[str, int, Callable[[], int]]] = [
        (name, n, lambda w=weights: ours(w)) for name, weights, n in _settings(threads)
    ]
    runs += [("transformers, 1", 1, reference), (f"transformers, {threads}", threads, reference)]
    rows: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for _ in range(rounds):
        for name, n, fn in runs:
            wall, _, made = _timed_on(n, fn)
            rows[name].append(made / wall)
    lm.prefix = PrefixCache()
    weight_bytes = sum(p.numel() * p.element_size() for p in lm.model.parameters())
    bw = run_on_model_thread(_bandwidth_gbs)  # with the default threads (set last)
    print(f"\n1. greedy decoding, {tokens} tokens, {rounds} rounds (tokens/s wall: median, best)")
    for name, vals in rows.items():
        print(f"{name:24}{statistics.median(vals):>8.1f} ({max(vals):5.1f})")
    before = statistics.median(rows["ours, before"])
    for name in list(rows)[1:3]:
        print(f"{name} / ours, before: {statistics.median(rows[name]) / before:.2f}x")
    print(f"bandwidth bound: {weight_bytes / 1e6:.0f} MB of float32 weights per token over "
          f"{bw:.1f} GB/s copy bandwidth ({threads} threads) = {bw * 1e9 / weight_bytes:.1f} "
          "tokens/s (no bound where the weights fit in the CPU's cache)")  # fmt: skip


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
            w, c, reply = _timed_on(torch_threads(), lambda req=req: generate_one(lm, req))
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
    """The trainer's rollouts, before (one thread, no prefix cache) and now (the default
    threads and the cache): generated tokens per second (wall) and per CPU-second."""
    policy = load_policy()
    threads = torch_threads()
    dialogues = [_dialogue(turns) for _ in range(4)]
    for d, dialogue in enumerate(dialogues):  # four different dialogues
        for prompt in dialogue:
            prompt[1] = Message(role="user", content=f"({d}) {prompt[1].content}")
    out = {}
    settings = (("before: 1 thread, no cache", 1, 0), (f"now: {threads} threads, cache", threads,
                2**28), (f"{threads} threads, no cache", threads, 0))  # fmt: skip
    for name, n, size in settings:
        policy.prefix = PrefixCache(max_bytes=size)
        generated, wall, cpu = 0, 0.0, 0.0
        for t in range(turns):
            batch = [policy.prompt_ids(d[t], tokens) for d in dialogues]
            torch.manual_seed(t)
            w, c, gens = _timed_on(n, lambda b=batch: policy.generate(b, max_new_tokens=tokens))
            generated += sum(len(g.token_ids) for g in gens)
            wall, cpu = wall + w, cpu + c
        out[name] = (generated / max(wall, 1e-9), generated / max(cpu, 1e-9))
    print(f"\n3. rollouts as the trainer's: 4 dialogues x {turns} turns, {tokens} tokens per reply")
    print(f"{'':30}{'tokens/s':>10}{'tokens/CPU-s':>14}")
    for name, (rate, per_cpu) in out.items():
        print(f"{name:30}{rate:>10.1f}{per_cpu:>14.1f}")
    (b_wall, _), (n_wall, _) = list(out.values())[:2]
    print(f"now / before (wall): {n_wall / b_wall:.2f}x")


def serve_long(tokens: int) -> None:
    """A long judge-like prompt answered cold before (one thread) and now (the default
    threads), then again with the same fixed part (the prefix cache)."""
    lm = load_offline_model()
    threads = torch_threads()
    fixed = " ".join(LINES) * 22  # a judge's long fixed instructions and dialogue so far
    backend = OfflineBackend()

    def ask(last: str, n: int) -> tuple[float, int, int]:
        msgs = [Message(role="system", content=fixed), Message(role="user", content=last)]
        req = ChatRequest(model="m", messages=msgs, params={"max_tokens": tokens})
        os.environ["EMPATHOS_TORCH_THREADS"] = str(n)  # read by the model thread
        try:
            wall, _, reply = _timed(lambda: asyncio.run(backend.complete(req)))
        finally:
            os.environ["EMPATHOS_TORCH_THREADS"] = str(threads)
        return wall, reply.input_tokens, reply.cached_tokens

    lm.prefix = PrefixCache()
    before = ask("Rate the listener's last reply.", 1)
    lm.prefix = PrefixCache()
    cold = ask("Rate the listener's last reply.", threads)
    warm = ask("Rate the listener's reply again.", threads)
    print(f"\n4. serve's long prompt ({cold[1]} tokens, {tokens} tokens of reply), wall seconds")
    print(f"before (1 thread, cold): {before[0]:.1f} s; now ({threads} threads) cold: "
          f"{cold[0]:.1f} s; the next request with the same fixed part: {warm[0]:.1f} s "
          f"({warm[2]} of {warm[1]} prompt tokens from the cache)")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--only", choices=["greedy", "prefill", "rollouts", "serve"], default=None)
    args = ap.parse_args()
    load_offline_model()
    print(f"torch threads on the model thread: {torch_threads()}; load average when started: "
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
