"""H2O's MRM workflow: nine ordered, resumable, auditable steps from documents to sign-off.

May import ``api`` and everything below it.
"""

from __future__ import annotations

from evalnb.workflow.core import Workflow, workflow
from evalnb.workflow.steps import STEPS, StepWaiting

__all__ = ["STEPS", "StepWaiting", "Workflow", "workflow"]
