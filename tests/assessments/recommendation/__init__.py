"""The recommendation assessment's own tests."""
