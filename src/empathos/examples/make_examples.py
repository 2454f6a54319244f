"""Regenerate the bundled example records: ``python -m empathos.examples.make_examples``.

Every line of dialogue and every rating here is invented for the project. The records run
under a short EPM configuration (min_turns 4, max_turns 8) so they stay small.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from empathos.epm import EPMConfig
from empathos.examples import examples_dir
from empathos.records import (
    DialogueRecord,
    IndicatorRating,
    Turn,
    record_from_ratings,
    write_record,
)
from empathos.rubric import EMPATHY_RUBRIC

__all__ = ["CONFIG", "build_examples", "main"]

CONFIG = EPMConfig.preset("reference", min_turns=4, max_turns=8)
_MDEP = [i.key for i in EMPATHY_RUBRIC.mdep]  # C.Prog C.Neg A.Prog A.Neg P.Prog P.Neg

MOVE_USER = [
    "I moved to a new city for work three weeks ago and I still don't know anyone.",
    "Evenings are the worst. I just sit in the flat scrolling my phone.",
    "Back home I had my sister five minutes away. Here nobody would notice if I vanished.",
    "I tried a climbing gym once but everyone already seemed to know each other.",
    "Maybe I'm just bad at starting over.",
    "I guess I could try the beginners' night they advertise on Thursdays.",
    "It helps to say it out loud, honestly.",
    "Okay. Thursday, then. I'll tell you how it goes.",
]
EXAM_USER = [
    "I failed my driving test for the second time today.",
    "The examiner said I hesitated at a roundabout. I always freeze there.",
    "My friends all passed first time. I feel like the slow one again.",
    "My dad keeps offering to take me out practising but he shouts.",
    "I don't even know if I want to book another one.",
    "Part of me thinks I should just give up on driving.",
    "Maybe practising only roundabouts with an instructor would help.",
    "Thanks. I think I needed someone to not make it a big deal.",
]
WARM_MOVE = [
    "Three weeks in a new place with no one to call is lonely. What has it been like?",
    "Those quiet evenings can feel very long when the day has had no one in it.",
    "So it's not only missing company, it's missing being known by someone nearby.",
    "Walking into a room where groups already exist takes courage; you still went.",
    "Starting over is hard for everyone; one awkward visit says little about you.",
    "A beginners' night sounds like a room where everyone is new. That could suit you.",
    "I'm glad. You've been carrying this alone for a while.",
    "I'd like that. Good luck on Thursday.",
]
CURT_MOVE = [
    "Just join some clubs.",
    "You should stop using your phone so much, it's bad for you.",
    "Everyone feels that way. It's normal.",
    "Maybe climbing isn't for you then.",
    "You need to be more confident.",
    "Sure.",
    "Okay.",
    "Fine.",
]
WARM_EXAM = [
    "Second time is a hard knock. How are you feeling tonight?",
    "Freezing at the same spot twice sounds frustrating, as if it knows your weak point.",
    "Comparing yourself with friends can make one result feel like a verdict on you.",
    "Practising with someone who shouts would make anyone tense up.",
    "It makes sense to want a pause before deciding.",
    "Giving up is an option; so is changing how you practise. Neither is failure.",
    "Focused lessons on the part that scares you is a very practical plan.",
    "Any time. It is one test, not a measure of you.",
]
CURT_EXAM = [
    "Lots of people fail. Just rebook.",
    "Roundabouts are easy once you get used to them.",
    "Your friends probably practised more.",
    "Your dad is trying to help, you should accept it.",
    "You should definitely book another one.",
    "Don't give up, that's a bad attitude.",
    "Yes, lessons help.",
    "No problem.",
]


def _r(*levels: int) -> dict[str, IndicatorRating]:
    return {
        k: IndicatorRating(level=lv, evidence="0" if lv == 0 else "quoted reply", reasoning="")
        for k, lv in zip(_MDEP, levels, strict=True)
    }


def _iedr(levels: dict[str, int]) -> dict[str, IndicatorRating]:
    return {
        k: IndicatorRating(level=v, evidence="persona card", reasoning="")
        for k, v in levels.items()
    }


IEDR_MOVE = _iedr(
    {"C.1": 1, "C.2": 1, "C.3": 1, "A.1": 1, "A.2": 1, "A.3": 1, "P.1": 1, "P.2": 1, "P.3": 1}
)
IEDR_EXAM = _iedr(
    {"C.1": 0, "C.2": 1, "C.3": 1, "A.1": 2, "A.2": 1, "A.3": 1, "P.1": 1, "P.2": 1, "P.3": 2}
)


def _record(
    case: str,
    model: str,
    iedr: dict[str, IndicatorRating],
    lines: tuple[list[str], list[str]],
    mdep: Sequence[dict[str, IndicatorRating] | None],
) -> DialogueRecord:
    user, reply = lines
    turns = [
        Turn(index=i, user=u, assistant=a)
        for i, (u, a) in enumerate(zip(user, reply, strict=True), 1)
    ]
    return record_from_ratings(
        scenario_id=case, model=model, iedr=iedr, turns=turns, mdep=mdep, config=CONFIG
    )


def build_examples() -> dict[str, list[DialogueRecord]]:
    """The four example records, by model directory."""
    warm_move = [_r(1, 0, 1, 0, 0, 0), _r(1, 0, 2, 0, 0, 0), _r(2, 0, 1, 0, 1, 0),
                 _r(1, 0, 1, 0, 2, 0), _r(1, 0, 1, 0, 1, 0), _r(1, 0, 1, 0, 2, 0),
                 _r(1, 0, 2, 0, 1, 0), _r(1, 0, 1, 0, 1, 0)]  # fmt: skip
    curt_move = [_r(0, -1, 0, -1, 1, 0), _r(0, -1, 0, -1, 0, -1), _r(0, -1, 0, -2, 0, 0),
                 _r(0, -1, 0, -1, 0, -1), _r(0, -1, 0, -1, 0, -1), _r(0, 0, 0, -1, 0, 0),
                 _r(0, 0, 0, -1, 0, 0), _r(0, 0, 0, -1, 0, 0)]  # fmt: skip
    warm_exam = [_r(1, 0, 1, 0, 0, 0), _r(1, 0, 1, 0, 0, 0), _r(0, 0, 1, 0, 0, 0),
                 _r(1, 0, 1, 0, 0, 0), _r(1, 0, 0, 0, 1, 0), None, _r(1, 0, 1, 0, 1, 0),
                 _r(0, 0, 1, 0, 0, 0)]  # fmt: skip
    curt_exam = [_r(0, -1, 0, -1, 1, 0), _r(1, 0, 0, 0, 0, 0), _r(0, 0, 0, -1, 0, 0),
                 _r(1, 0, 0, -1, 0, 0), _r(0, 0, 0, 0, 1, -1), _r(0, 0, 0, -1, 1, 0),
                 _r(0, 0, 0, 0, 1, 0), _r(0, 0, 0, 0, 0, 0)]  # fmt: skip
    move, exam = "ex-new-city", "ex-driving-test"
    return {
        "example-warm": [
            _record(move, "example-warm", IEDR_MOVE, (MOVE_USER, WARM_MOVE), warm_move),
            _record(exam, "example-warm", IEDR_EXAM, (EXAM_USER, WARM_EXAM), warm_exam),
        ],
        "example-curt": [
            _record(move, "example-curt", IEDR_MOVE, (MOVE_USER, CURT_MOVE), curt_move),
            _record(exam, "example-curt", IEDR_EXAM, (EXAM_USER, CURT_EXAM), curt_exam),
        ],
    }


def main(out: Path | None = None) -> None:
    """Write the examples (default: the package's ``records`` directory)."""
    root = out or examples_dir()
    for model, records in build_examples().items():
        for rec in records:
            write_record(rec, root / model / f"{rec.scenario_id}.json")


if __name__ == "__main__":
    main()
