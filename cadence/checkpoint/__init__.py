"""Checkpoint files below the runner: publishing now; the checkpoint manager is in progress."""
