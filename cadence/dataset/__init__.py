"""cadence.dataset: filled by later issues (see DESIGN.md)."""
