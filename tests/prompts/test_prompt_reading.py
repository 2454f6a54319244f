"""Reading the rated reply back from a rendered MDEP judge prompt, in both languages and both
styles (issue 24: the toy judges' helper found nothing in a Chinese transcript)."""

from __future__ import annotations

import pytest

from empathos.llm import ChatRequest, Message
from empathos.prompts import judge_mdep_prompt, rated_reply
from empathos.scenarios import load_builtin
from empathos.train.toy import judge_addresses_user, last_reply

CASES = {"en": "en-01-sourdough", "zh": "zh-01-old-house"}
LAST = {"en": "You can try again\non Sunday.", "zh": "我理解你的感受。\n我们慢慢来。"}


@pytest.mark.parametrize("style", ["full", "compact"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_last_supporter_reply_is_found(language: str, style: str) -> None:
    scenario = next(s for s in load_builtin().scenarios if s.id == CASES[language])
    history = [("user", "first"), ("model", "an earlier reply"), ("user", "second"),
               ("model", LAST[language])]  # fmt: skip
    prompt = judge_mdep_prompt(
        scenario, history=history, window=history[-2:], k=1, language=language, style=style
    )
    assert rated_reply(prompt.text) == LAST[language]
    request = ChatRequest(model="judge", messages=[Message(role="user", content=prompt.text)])
    assert last_reply(request) == LAST[language]
    assert rated_reply("no transcript here") == ""


def test_the_toy_judge_reads_a_chinese_window() -> None:
    scenario = next(s for s in load_builtin().scenarios if s.id == CASES["zh"])
    history = [("user", "第一句"), ("model", "你今晚可以先休息。")]
    prompt = judge_mdep_prompt(scenario, history=history, window=history, k=1, language="zh")
    request = ChatRequest(
        model="judge", messages=[Message(role="user", content=prompt.text)],
        schema_name="MDEPForm", response_schema={"type": "object"},
    )  # fmt: skip
    # "you" in Chinese is 你: the toy rule is English-only, but the reply it reads is right
    assert last_reply(request) == "你今晚可以先休息。"
    form = judge_addresses_user(request)
    assert isinstance(form, dict) and set(form) >= {"C.Prog", "A.Prog", "P.Prog"}
