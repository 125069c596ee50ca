"""cadence.model: filled by later issues (see DESIGN.md)."""
