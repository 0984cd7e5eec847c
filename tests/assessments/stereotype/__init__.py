"""The stereotype assessment's own tests."""
