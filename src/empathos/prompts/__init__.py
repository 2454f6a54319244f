"""Prompts as data: versioned templates per role and language, filled only through slots.

Use the role builders (``user_prompt``, ``director_prompt``, ``judge_iedr_prompt``,
``judge_mdep_prompt``: a :class:`ChatPrompt` built for prefix caches;
``model_under_test_prompt``: a system prompt) or ``render`` directly; record the returned
prompt's ``id`` and ``version`` with every call.
"""

from empathos.prompts.reading import rated_reply
from empathos.prompts.render import (
    LANGUAGES,
    ROLES,
    STYLES,
    ChatPrompt,
    PromptStyle,
    PromptTemplate,
    RenderedPrompt,
    Role,
    load_template,
    render,
)
from empathos.prompts.roles import (
    director_prompt,
    judge_iedr_prompt,
    judge_mdep_prompt,
    model_under_test_prompt,
    user_prompt,
)

__all__ = [
    "LANGUAGES",
    "ROLES",
    "STYLES",
    "ChatPrompt",
    "PromptStyle",
    "PromptTemplate",
    "RenderedPrompt",
    "Role",
    "director_prompt",
    "judge_iedr_prompt",
    "judge_mdep_prompt",
    "load_template",
    "model_under_test_prompt",
    "rated_reply",
    "render",
    "user_prompt",
]
