"""cadence.runner: filled by later issues (see DESIGN.md)."""
