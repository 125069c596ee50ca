"""cadence.evaluator: filled by later issues (see DESIGN.md)."""
