"""cadence.hooks: filled by later issues (see DESIGN.md)."""
