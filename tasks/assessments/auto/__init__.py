"""The AutoEval assessment."""
