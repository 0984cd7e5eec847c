"""Files shipped with equilens, installed as package data (see tasks/shipped.py), and the example
application a shipped config tests (``example_app``)."""
