"""Running a benchmark campaign: config, roles, session, runner, run directory, manifest and
progress. ``empathos run`` is the command over it; ``empathos.run.session.prepare_run`` and
``execute`` are the API (see ``docs/run.md``)."""
