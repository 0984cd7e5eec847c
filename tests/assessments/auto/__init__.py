"""The auto assessment's own tests."""
