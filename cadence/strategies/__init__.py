"""cadence.strategies: filled by later issues (see DESIGN.md)."""
