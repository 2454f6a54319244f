"""What every campaign on a run directory shares (``empathos run``, ``rejudge``, ``bench``):
the prepared session (its directory, manifest, plan, what it finished) and the start of a
session in the manifest. Each campaign's own ``prepare_*`` adds its parts (roles, items,
originals) to :class:`PreparedSession`; ``session.close_session`` ends them all alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from empathos.errors import RecordError
from empathos.llm import ResponseCache
from empathos.run.manifest import Manifest, RunUsage, Session, write_manifest
from empathos.run.rundir import RunDir
from empathos.run.runner import Plan, RunOutcome

__all__ = ["PreparedSession", "begin_session"]


@dataclass(kw_only=True)
class PreparedSession:
    """A session of a campaign ready to execute on its open run directory."""

    run_dir: RunDir
    manifest: Manifest
    plan: Plan
    unreadable: list[RecordError] = field(default_factory=list)
    """Records the directory held that could not be read (their items run again)."""
    cache: ResponseCache | None = None
    outcome: RunOutcome = field(default_factory=RunOutcome)
    """What this session has finished so far (filled as items end, Ctrl-C or not)."""
    usage: RunUsage | None = None
    """The directory's tokens and cost (``session.usage_of``), once computed."""

    @property
    def session(self) -> Session:
        """This invocation's entry in the manifest."""
        return self.manifest.sessions[-1]


def begin_session(manifest: Manifest, plan: Plan, out: Path) -> None:
    """Count the session's plan into its manifest entry (``manifest.new_manifest`` made it
    ``running``) and write the manifest into ``out``."""
    manifest.sessions[-1].planned = plan.total
    manifest.sessions[-1].skipped = len(plan.finished)
    write_manifest(manifest, out)
