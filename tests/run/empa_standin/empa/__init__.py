"""A stand-in for the EMPA release, written for empathos's tests (invented, own code).

It implements only the public API that ``empathos run --protocol empa-release`` drives, with
deterministic agents whose every model call goes through the given ``LLMClient``. It is not
the release: no prompt or code of the release is copied here.
"""

__version__ = "0.0.0+standin"
