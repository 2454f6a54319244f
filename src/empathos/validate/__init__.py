"""Does the judge-plus-EPM measure what it claims? Perturbations, ablations, agreement.

``empathos validate`` re-judges sampled evaluation points of recorded dialogues after a
Persona Flip and after sycophantic reply swaps, scores each pair with the EPM, a rubric-only
linear score and a direct judge, and compares judges with each other (see docs/validate.md).
"""

from empathos.validate.perturb import SYCOPHANCY_KINDS, flip_persona, sycophantic_reply
from empathos.validate.pipeline import JudgeSpec, run_validation, write_outputs
from empathos.validate.stats import summarize_deltas, weighted_kappa
from empathos.validate.study import StudyOptions

__all__ = [
    "SYCOPHANCY_KINDS",
    "JudgeSpec",
    "StudyOptions",
    "flip_persona",
    "run_validation",
    "summarize_deltas",
    "sycophantic_reply",
    "weighted_kappa",
    "write_outputs",
]
