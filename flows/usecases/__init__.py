"""Use cases: plan, replan, approve, reject, dispatch, read drafts, export, report."""
