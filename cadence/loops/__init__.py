"""cadence.loops: filled by later issues (see DESIGN.md)."""
