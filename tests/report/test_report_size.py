"""The page of a full leaderboard, 16 models x 30 published dialogues, stays under 13 MB with
every dialogue on it (each one found in its pack)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report_helpers import empathos, unpack

from empathos.records import load_records, write_record

LIMIT_MB = 13.0


def _sixteen_models(results: Path, root: Path) -> int:
    """Model k takes the dialogues of published model k mod 3 (as benchmarks/bench_report.py
    builds its 16 x 30 set): real published content and length; the page stores each
    model's dialogues apart, so sharing them makes the page no smaller."""
    loaded, _ = load_records([results])
    by_model: dict[str, list] = {}
    for x in loaded:
        by_model.setdefault(x.model_name, []).append(x.record)
    sources = sorted(by_model)
    count = 0
    for k in range(16):
        folder = root / f"synthetic-{k:02d}"
        for rec in by_model[sources[k % len(sources)]]:
            write_record(
                rec.model_copy(update={"model": folder.name}), folder / f"{rec.scenario_id}.json"
            )
            count += 1
    return count


def test_a_16_by_30_page_stays_under_13_mb(empa_sample: Path, tmp_path: Path) -> None:
    count = _sixteen_models(empa_sample / "results", tmp_path / "results")
    assert count == 16 * 30
    out = tmp_path / "report"
    res = empathos("report", str(tmp_path / "results"), "--out", str(out), "--no-figures")
    assert res.returncode == 0, res.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    size_mb = len(page.encode("utf-8")) / 1e6
    assert size_mb < LIMIT_MB, f"{size_mb:.2f} MB"
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page)
    assert found is not None
    data = json.loads(found.group(1))
    assert len(data["dialogues"]) == count
    col = {name: i for i, name in enumerate(data["dialogue_columns"])}
    packs = [unpack(p) for p in data["packs"]]
    for row in data["dialogues"]:
        detail = packs[row[col["pack"]]][row[col["item"]]]
        assert detail["turns"] and len(detail["turns"]) == row[col["turns"]]
