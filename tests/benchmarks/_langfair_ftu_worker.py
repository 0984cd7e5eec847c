"""Runs inside the LangFair venv: times LangFair 0.8's check_ftu and create_prompts.

Reads prompts (one per line) from the file given, prints one JSON line with prompts/s. LangFair
tokenises with nltk's ``word_tokenize``; punkt cannot be downloaded here, so the Treebank word
tokenizer stands in (what word_tokenize applies after sentence splitting).
"""

import json
import sys
import time


def main() -> None:
    import nltk.tokenize
    from nltk.tokenize import NLTKWordTokenizer

    nltk.tokenize.word_tokenize = NLTKWordTokenizer().tokenize
    import langfair.generator.counterfactual as cf

    if hasattr(cf, "word_tokenize"):
        cf.word_tokenize = NLTKWordTokenizer().tokenize
    gen = cf.CounterfactualGenerator()
    prompts = open(sys.argv[1], encoding="utf-8").read().splitlines()
    out = {"prompts": len(prompts)}
    for attribute in ("gender", "race"):
        t = time.perf_counter()
        gen.check_ftu(prompts=prompts, attribute=attribute, subset_prompts=True)
        out[f"check_ftu_{attribute}_s"] = time.perf_counter() - t
        t = time.perf_counter()
        gen.create_prompts(prompts=prompts, attribute=attribute)
        out[f"create_prompts_{attribute}_s"] = time.perf_counter() - t
    print(json.dumps(out))


if __name__ == "__main__":
    main()
