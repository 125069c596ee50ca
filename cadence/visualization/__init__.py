"""cadence.visualization: filled by later issues (see DESIGN.md)."""
