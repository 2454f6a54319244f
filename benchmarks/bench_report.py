"""Time `empathos report` and measure the HTML size: the published sample (3 models x 30
dialogues) and a synthetic 16 x 30, against the targets (20 s, 15 MB for 16 x 30).

The synthetic set reuses the published dialogues (model k takes the dialogues of published
model k mod 3, renamed), written as our own records into a temporary folder, so each
dialogue carries real published content and length. Each dialogue's details are compressed
on their own, so reusing dialogues does not make the page smaller. Needs
EMPATHOS_EMPA_SAMPLE; run:

    python benchmarks/bench_report.py [--no-figures]
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

from empathos.records import load_records, write_record

TARGET_S = 20.0
TARGET_MB = 15.0


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


def _time_report(paths: list[Path], out: Path, figures: bool) -> tuple[float, float, float]:
    cmd = [sys.executable, "-m", "empathos", "report", *map(str, paths), "--out", str(out)]
    if not figures:
        cmd.append("--no-figures")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, (out / "index.html").stat().st_size / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-figures", action="store_true", help="skip figures/ (PNG, SVG)")
    args = ap.parse_args()
    sample = os.environ.get("EMPATHOS_EMPA_SAMPLE")
    if not sample:
        sys.exit("set EMPATHOS_EMPA_SAMPLE to the published sample")
    results = Path(sample) / "results"
    figures = not args.no_figures
    print(f"cpus: {os.cpu_count()}; figures: {'yes' if figures else 'no'}")
    print("wall time counts waits for a shared machine's cores; CPU time is the work done")
    print(
        f"{'input':<26} {'wall (s)':>9} {'CPU (s)':>8} {'limit':>6} {'HTML (MB)':>10} {'limit':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        t, cpu, mb = _time_report([results], Path(tmp) / "r3", figures)
        print(
            f"{'published sample 3 x 30':<26} {t:>9.1f} {cpu:>8.1f} {'-':>6} {mb:>10.1f} {'-':>6}"
        )
        syn = _synthetic(results, Path(tmp) / "syn", 16)
        t, cpu, mb = _time_report([syn], Path(tmp) / "r16", figures)
        print(
            f"{'synthetic 16 x 30':<26} {t:>9.1f} {cpu:>8.1f} {TARGET_S:>6.0f} {mb:>10.1f} "
            f"{TARGET_MB:>6.0f}"
        )


if __name__ == "__main__":
    main()
