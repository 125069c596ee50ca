"""cadence.optim: filled by later issues (see DESIGN.md)."""
