"""kb-balanced: Lexical + associative retrieval with diversity-aware reranking. Recommended default for moderate-complexity questions."""
