"""Inputs of every assessment: prompts, lexicons and names, FTU detection, counterfactual expansion, bias
specifications and benchmark datasets."""
