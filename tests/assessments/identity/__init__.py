"""The identity assessment's own tests."""
