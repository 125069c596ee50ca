"""A tiny box-regression task on generated images (see README.md)."""
