"""Real-to-Sim: distil real support conversations into scenarios the sandbox can run.

``empathos distill`` (see ``docs/distill.md``): read conversations (:mod:`.formats`), filter
and scrub them (:mod:`.scrub`), extract features, generate a persona card and a crisis story,
validate, drop near-duplicates (:mod:`.checks`), rate the IEDR with the judge, and write a
scenario directory (:mod:`.pipeline`). :mod:`.review` exports stage-1 results for a human
check and reports accuracy; :mod:`.expand` writes guided variants of a scenario.
"""

from empathos.distill.formats import Conversation, read_conversations
from empathos.distill.pipeline import DistillOptions, DistillSummary, run_distill
from empathos.distill.scrub import scrub_conversation

__all__ = [
    "Conversation",
    "DistillOptions",
    "DistillSummary",
    "read_conversations",
    "run_distill",
    "scrub_conversation",
]
