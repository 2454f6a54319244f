"""The application layer's campaigns that span several domains: ``compare --pairwise``
(dialogues of runs and bench directories, scenario profiles, the pairwise engine, the
degraded check). ``empathos run``, ``rejudge`` and ``bench`` are campaigns of ``run/`` and
``bench/`` (one prepared-session base, manifest header and interrupt path: docs/architecture.md).
"""
