"""The default empathy rubric: axes C (cognitive), A (affective), P (proactive).

Scores follow EPM_SPEC sections 2-3; every meaning string is the project's own wording.
"""

from __future__ import annotations

from empathos.rubric.model import Axis, Indicator, Rubric

__all__ = ["EMPATHY_RUBRIC", "MDEP_KEYS"]

_STD = {0: 0.0, 1: -2.0, 2: -4.0, 3: -6.0}
_PRIORITY = {0: 0.0, 1: -3.0, 2: -6.0, 3: -9.0}
_CORE = {0: 0.0, 1: -4.0, 2: -8.0, 3: -12.0}
_DEFICIT_LEVELS = {0: "none", 1: "mild", 2: "marked", 3: "severe"}


def _iedr(key: str, name: str, meaning: str, scores: dict[int, float]) -> Indicator:
    return Indicator(
        key=key,
        axis=key.split(".")[0],
        name=name,
        meaning=meaning,
        kind="deficit",
        scores=scores,
        level_meanings=dict(_DEFICIT_LEVELS),
    )


_PROG_MEANINGS = {
    "C": {
        0: "no real sign that the person was understood",
        1: "the reply shows accurate understanding of what the person said",
        2: "a deep insight or a reframing that changes how the person sees the situation",
    },
    "A": {
        0: "no emotional attunement",
        1: "the feelings the person voiced are acknowledged and validated",
        2: "the reply resonates with a feeling the person had not yet put into words",
    },
    "P": {
        0: "nothing that strengthens the person's sense of agency",
        1: "the person's motives are affirmed or they get concrete, doable help",
        2: "a core barrier to acting is removed (advice alone never earns this level)",
    },
}
_NEG_MEANINGS = {
    0: "no harm on this axis",
    -1: "misses the point, wrong tone, stock or performed empathy, or lecturing",
    -2: "badly misreads or dismisses the experience, judges feelings, repeats hollow patterns",
}
_NEG_SEVERE = {"C": -4.0, "A": -5.0, "P": -5.0}
_AXIS_NAMES = {"C": "cognitive", "A": "affective", "P": "proactive"}


def _mdep() -> tuple[Indicator, ...]:
    out: list[Indicator] = []
    for ax in ("C", "A", "P"):
        out.append(
            Indicator(
                key=f"{ax}.Prog",
                axis=ax,
                name=f"{_AXIS_NAMES[ax]} progress",
                meaning=f"how far this reply moved the person on the {_AXIS_NAMES[ax]} axis",
                kind="progress",
                scores={0: 0.0, 1: 1.0, 2: 3.0},
                level_meanings=_PROG_MEANINGS[ax],
            )
        )
        out.append(
            Indicator(
                key=f"{ax}.Neg",
                axis=ax,
                name=f"{_AXIS_NAMES[ax]} harm",
                meaning=f"how much this reply set the person back on the {_AXIS_NAMES[ax]} axis",
                kind="negative",
                scores={0: 0.0, -1: -2.0, -2: _NEG_SEVERE[ax]},
                level_meanings=dict(_NEG_MEANINGS),
            )
        )
    return tuple(out)


EMPATHY_RUBRIC = Rubric(
    name="empathy",
    version="1",
    axes=(
        Axis(key="C", name="cognitive", description="the need to be understood"),
        Axis(key="A", name="affective", description="the need to be emotionally met"),
        Axis(key="P", name="proactive", description="the need to be affirmed and empowered"),
    ),
    iedr=(
        _iedr("C.1", "situation complexity", "background knowledge needed to follow it", _STD),
        _iedr("C.2", "depth", "how deep the thoughts and feelings involved run", _STD),
        _iedr("C.3", "cognitive priority", "how much the person needs to be understood", _PRIORITY),
        _iedr("A.1", "emotional intensity", "how strong the opening emotion is", _STD),
        _iedr("A.2", "emotional accessibility", "how hard the feeling is to put in words", _CORE),
        _iedr("A.3", "affective priority", "how much the person needs resonance", _PRIORITY),
        _iedr("P.1", "initial agency", "capacity to act (0 = fully able, 3 = stuck)", _STD),
        _iedr("P.2", "value relevance", "how much the problem touches core values", _CORE),
        _iedr("P.3", "motivational priority", "how much the person needs affirmation", _PRIORITY),
    ),
    mdep=_mdep(),
)

MDEP_KEYS: tuple[str, ...] = tuple(i.key for i in EMPATHY_RUBRIC.mdep)
