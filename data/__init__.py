"""Files shipped with equilens, installed as package data (see tasks/shipped.py); no code."""
