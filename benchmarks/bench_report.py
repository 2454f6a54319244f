"""Time `empathos report` and measure the HTML size: the published sample (3 models x 30
dialogues) and a synthetic 16 x 30, against the targets (20 s, 13 MB for 16 x 30).

The synthetic set reuses the published dialogues (model k takes the dialogues of published
model k mod 3, renamed), written as our own records into a temporary folder, so each
dialogue carries real published content and length. The page stores the dialogues of each
model in packs of that model alone (bzip2), so a dialogue that five synthetic models share
is stored five times, compressed five times: reusing dialogues does not make the page smaller
or faster. Needs EMPATHOS_EMPA_SAMPLE; run:

    python benchmarks/bench_report.py [--no-figures]

Wall time on a shared machine counts waits for its cores, so CPU time is printed too: the
whole command's (every process), and, from a second run inside this process, its parts. A
second process draws the trajectory figures ("worker") while the first builds the page and
then draws the summary figures ("figs"), so on two idle cores the command takes about
start + load + scores + max(page + figs, worker, (page + figs + worker) / 2) ("2-core est.").
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from empathos.cli.report import _labels
from empathos.cli.score import _load
from empathos.epm import EPMConfig
from empathos.records import load_records, write_record
from empathos.report.writer import write_report

TARGET_S = 20.0
TARGET_MB = 13.0


def _synthetic(results: Path, root: Path, models: int) -> Path:
    loaded, _ = load_records([results])
    by_model: dict[str, list] = {}
    for x in loaded:
        by_model.setdefault(x.model_name, []).append(x.record)
    sources = sorted(by_model)
    for k in range(models):
        folder = root / f"synthetic-{k:02d}"
        for rec in by_model[sources[k % len(sources)]]:
            write_record(
                rec.model_copy(update={"model": folder.name}), folder / f"{rec.scenario_id}.json"
            )
    return root


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _time_command(paths: list[Path], out: Path, figures: bool) -> tuple[float, float, float]:
    """Wall and CPU seconds (the command and every process it started) and the HTML in MB."""
    cmd = [sys.executable, "-m", "empathos", "report", *map(str, paths), "--out", str(out)]
    if not figures:
        cmd.append("--no-figures")
    before = _children_cpu()
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return wall, _children_cpu() - before, (out / "index.html").stat().st_size / 1e6


def _startup_cpu() -> float:
    """CPU seconds of starting the command: Python and the CLI's imports."""
    before = _children_cpu()
    subprocess.run([sys.executable, "-c", "import empathos.cli.main"], check=True)
    return _children_cpu() - before


def _parts(paths: list[Path], out: Path, figures: bool) -> dict[str, float]:
    """CPU seconds of loading, scores, page and figures, run in this process as the CLI does."""
    err = Console(stderr=True, quiet=True)
    t0 = time.process_time()
    records, _ = _load(paths, err)
    labels = _labels(paths, None, records, err)
    parts = {"load": time.process_time() - t0}
    write_report(
        records, out, config=EPMConfig.preset("reference"), labels=labels, figures=figures,
        timings=parts,
    )  # fmt: skip
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-figures", action="store_true", help="skip figures/ (PNG, SVG)")
    args = ap.parse_args()
    sample = os.environ.get("EMPATHOS_EMPA_SAMPLE")
    if not sample:
        sys.exit("set EMPATHOS_EMPA_SAMPLE to the published sample")
    results = Path(sample) / "results"
    figures = not args.no_figures
    start = _startup_cpu()
    print(f"cpus: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}; "
          f"figures: {'yes' if figures else 'no'}")  # fmt: skip
    print("CPU seconds: start (imports) + load + scores + (page + figs | worker)")
    head = (f"{'input':<24} {'wall':>6} {'CPU':>6} {'start':>6} {'load':>5} {'scores':>6} "
            f"{'page':>5} {'figs':>5} {'worker':>6} {'2-core est.':>11} {'limit':>5} "
            f"{'HTML MB':>8} {'limit':>5}")  # fmt: skip
    print(head)
    with tempfile.TemporaryDirectory() as tmp:
        syn = _synthetic(results, Path(tmp) / "syn", 16)
        for name, src, limits in (
            ("published sample 3 x 30", results, False),
            ("synthetic 16 x 30", syn, True),
        ):
            wall, cpu, mb = _time_command([src], Path(tmp) / "cmd", figures)
            p = _parts([src], Path(tmp) / "parts", figures)
            main_s, worker = p["page"] + p["figures"], p["worker"]
            est = start + p["load"] + p["data"] + max(main_s, worker, (main_s + worker) / 2)
            lim_s = f"{TARGET_S:.0f}" if limits else "-"
            lim_mb = f"{TARGET_MB:.0f}" if limits else "-"
            print(
                f"{name:<24} {wall:>6.1f} {cpu:>6.1f} {start:>6.1f} {p['load']:>5.1f} "
                f"{p['data']:>6.1f} {p['page']:>5.1f} {p['figures']:>5.1f} {worker:>6.1f} "
                f"{est:>11.1f} {lim_s:>5} {mb:>8.1f} {lim_mb:>5}"
            )


if __name__ == "__main__":
    main()
