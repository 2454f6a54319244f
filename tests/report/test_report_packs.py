"""The dialogues' details in the page: packed per model (bzip2), each dialogue found where
the page looks for it, nothing shared between models."""

from __future__ import annotations

import json
from pathlib import Path

from report_helpers import un85, unpack

from empathos.examples import examples_dir
from empathos.records import read_record
from empathos.report.html import dialogue_detail, pack_dialogues, text85


def _records() -> list[tuple[str, Path]]:
    return sorted((p.parent.name, p) for p in examples_dir().glob("*/*.json"))


def test_packed_text_needs_no_escape_in_a_script_element() -> None:
    data = bytes(range(256)) * 4 + b"tail"
    for n in range(9):  # every length of the last group
        text = text85(data[: len(data) - n])
        assert un85(text) == data[: len(data) - n]
        assert not set(text) & set('"\\<>&') and text.isascii() and text.isprintable()


def test_every_dialogue_is_in_its_models_pack() -> None:
    items = _records()
    models = [m for m, _ in items]
    records = [read_record(p) for _, p in items]
    packed = pack_dialogues(models, records)
    unpacked = [unpack(p) for p in packed.packs]
    assert len(packed.packs) == len(set(models))  # small models: one pack each
    for model, rec, (k, j) in zip(models, records, packed.where, strict=True):
        want = json.loads(json.dumps(dialogue_detail(rec), ensure_ascii=False))
        assert unpacked[k][j] == want
        # a pack holds one model's dialogues only
        assert all(models[i] == model for i, (kk, _) in enumerate(packed.where) if kk == k)


def test_the_same_dialogues_under_two_models_are_stored_twice() -> None:
    items = _records()
    records = [read_record(p) for _, p in items]
    one = pack_dialogues(["a"] * len(records), records)
    two = pack_dialogues(["a"] * len(records) + ["b"] * len(records), records + records)
    assert sum(map(len, two.packs)) == 2 * sum(map(len, one.packs))


def test_a_model_with_much_text_gets_several_packs() -> None:
    items = _records()
    records = [read_record(p) for _, p in items]
    packed = pack_dialogues(["a"] * len(records), records, limit=1)
    assert len(packed.packs) == len(records)
    assert packed.where == [(i, 0) for i in range(len(records))]
