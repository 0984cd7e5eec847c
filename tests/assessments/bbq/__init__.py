"""The bbq assessment's own tests."""
