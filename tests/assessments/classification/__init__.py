"""The classification assessment's own tests."""
