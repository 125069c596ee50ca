"""cadence.logging: filled by later issues (see DESIGN.md)."""
