"""Scripted distiller replies that follow the request's content (so leaks would show).

Features copy the first seeker line of the (scrubbed) conversation into ``situation``; the
persona and crisis copy the ``situation`` line of the features they are given. A conversation
containing FAILME makes the extraction fail (fatal); NOTHING-HERE makes it "not usable".
"""

from __future__ import annotations

import re

from empathos.llm import ChatRequest, auto_reply, fault
from empathos.llm.scripted import Reply


def _prompt(request: ChatRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _zh(text: str) -> bool:
    return "请用中文" in text


def _situation(text: str) -> str:
    m = re.search(r"^situation: (.*)$", text, re.M)
    return m.group(1).strip().strip("'\"") if m else "unknown"


def features(text: str) -> dict[str, object]:
    if "FAILME" in text:
        raise fault("fatal", "scripted refusal for this conversation")
    m = re.search(r"^(?:seeker|求助者)[:：] ?(.*)$", text, re.M)
    first = m.group(1).strip() if m else "?"
    zh = _zh(text)
    usable = "NOTHING-HERE" not in text
    fill = "很难受，需要被理解" if zh else "hurt and wanting to be understood"
    return {
        "situation": first,
        "emotions": fill,
        "vent": fill,
        "support_sought": fill,
        "irritants": "套话" if zh else "stock phrases",
        "moved_by": "被认真对待" if zh else "being taken seriously",
        "memories": "小时候的事" if zh else "a childhood memory",
        "empathy_moments": fill,
        "domain": "career",
        "usable": "yes" if usable else "no",
        "skip_reason": "" if usable else "only a test message",
    }


def persona(text: str) -> dict[str, object]:
    sit = _situation(text)
    zh = _zh(text)
    t = lambda en, cn: cn if zh else en  # noqa: E731
    lv = {"level": "high", "rationale": t("They need this most right now.", "此刻最需要这个维度。")}
    lo = {"level": "low", "rationale": t("Less pressing at the moment.", "眼下不那么迫切的维度。")}
    return {
        "identity": {"name": t("Robin Vale", "周宁"), "gender": "female", "age": 40},
        "traits": {
            "outer": t("Calm and capable in front of others.", "在别人面前总是冷静能干。"),
            "inner": t("Quietly afraid of letting people down.", "内心一直害怕让别人失望。"),
        },
        "needs": {
            "vent": sit,
            "hoped_for": sit,
            "sensitivities": t(
                "Stock phrases irritate her; being taken seriously moves her.",
                "套话让她烦躁，被认真对待会让她感动。",
            ),
        },
        "priorities": {"cognitive": lv, "affective": lv, "proactive": lo},
        "experience": {
            "childhood": t(
                "Grew up helping in a family shop after school.", "小时候放学后在家里的小店帮忙。"
            ),
            "adolescence": t(
                "Was the one friends came to with their problems.", "少年时总是朋友们倾诉的对象。"
            ),
            "young_adulthood": t(
                "Moved away for work and built a life alone.", "青年时为了工作独自去了外地。"
            ),
            "growth_arc": t(
                "Learning that needing help is not failing.", "慢慢学会需要帮助并不等于失败。"
            ),
            "current_situation": sit,
            "main_goal": t(
                "Find her footing again after this setback.", "在这次挫折之后重新站稳脚跟。"
            ),
            "vision": "",
        },
    }


_STAGES = {
    "en": ("It brings back an old memory: ", "Looking back at what happened: ",
           "She asks herself what it says about her: ", "It all comes out at once: "),
    "zh": ("这件事勾起了一段旧回忆：", "回头看发生的一切：", "她问自己这说明了什么：",
           "情绪一下子全涌了出来："),
}  # fmt: skip


def crisis(text: str) -> dict[str, object]:
    sit = _situation(text)
    zh = _zh(text)
    lead = _STAGES["zh" if zh else "en"]
    stages = [
        {"title": f"{'阶段' if zh else 'Stage'} {i}", "content": lead[i - 1] + sit}
        for i in range(1, 5)
    ]
    return {
        "topic": sit,
        "trigger": sit,
        "stages": stages,
        "outcome": "被理解，然后想清楚下一步。"
        if zh
        else "To be understood, then to see a next step.",
        "interlude": "一段相似的旧日回忆。" if zh else "An old memory of a similar moment.",
    }


def variant(text: str) -> dict[str, object]:
    n = int(re.search(r"(?:variant number|第) (\d+)", text).group(1))  # type: ignore[union-attr]
    stories = {
        1: "She lost the bakery she ran for eleven years when the landlord doubled the rent",
        2: "Her closest friend left her out of the wedding party and she learned it online",
    }
    sit = stories[2] if n % 2 == 0 else stories[1]  # variant 3 repeats variant 1
    fake = f"situation: {sit}"
    return {"threshold": "high", "persona": persona(fake), "crisis": crisis(fake)}


#: The judge's IEDR levels (C.1 .. P.3): P_0 = (-4, -9, -6), far enough from the goal.
IEDR_LEVELS = {"C.1": 1, "C.2": 1, "C.3": 0, "A.1": 1, "A.2": 1, "A.3": 1, "P.1": 1, "P.2": 1,
               "P.3": 0}  # fmt: skip


def iedr() -> dict[str, object]:
    return {
        k: {"level": v, "evidence": "0" if v == 0 else "scripted", "reasoning": "scripted"}
        for k, v in IEDR_LEVELS.items()
    }


def handler(request: ChatRequest) -> Reply:
    """The distiller and the judge of the distill tests."""
    text = _prompt(request)
    name = request.schema_name
    if name == "IEDRForm":
        return iedr()
    if name == "Features":
        return features(text)
    if name == "PersonaDraft":
        return persona(text)
    if name == "CrisisDraft":
        return crisis(text)
    if name == "VariantDraft":
        return variant(text)
    return auto_reply(request)


class Interrupted(BaseException):
    """A stand-in for a crash or Ctrl-C: not an Exception, so nothing in the pipeline catches
    it (a real KeyboardInterrupt would also stop pytest itself)."""


def make_interrupting(after: int):  # type: ignore[no-untyped-def]
    """The handler, but every call after the first ``after`` raises :class:`Interrupted`."""
    calls = {"n": 0}

    def interrupting(request: ChatRequest) -> Reply:
        calls["n"] += 1
        if calls["n"] > after:
            raise Interrupted
        return handler(request)

    return interrupting
