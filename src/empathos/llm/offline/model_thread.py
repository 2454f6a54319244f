"""One thread runs every generation of the process's local models, with all their threads.

torch's CPU parallelism is OpenMP: each thread that runs a parallel region owns a team of
helper threads that spin between regions, and once the process holds more such threads than
cores, OpenMP stops spinning and every region wakes its helpers from sleep. A decoding step
is hundreds of short regions, so two threads that both compute with two torch threads on two
cores decode at one thread's speed (measured: 29.6 tokens/s from one computing thread, 16.9
from the same thread once another had computed with two). Hence: generation runs here, in
one long-lived thread with :func:`~empathos.llm.offline.model.torch_threads` threads, and
every other thread (the event loop's, the loader's) keeps one, so it never forms a team.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from empathos.llm.offline.model import torch_threads

__all__ = ["on_model_thread", "run_on_model_thread"]

T = TypeVar("T")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _executor_now() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="empathos-model")
        return _executor


def _with_threads(fn: Callable[[], T]) -> T:
    import torch

    torch.set_num_threads(torch_threads())  # cheap; another thread may have set its own
    return fn()


async def on_model_thread(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on the model thread, awaited without blocking the event loop."""
    loop = asyncio.get_running_loop()
    job = functools.partial(_with_threads, functools.partial(fn, *args))
    return await loop.run_in_executor(_executor_now(), job)


def run_on_model_thread(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on the model thread, waited for (the trainer's update, outside any event
    loop); its exception is raised here."""
    job = functools.partial(_with_threads, functools.partial(fn, *args))
    return _executor_now().submit(job).result()
