"""The decisions assessment's own tests."""
