"""kb-fast: Lexical-first retrieval with small result budget. Cheapest path, suitable for simple focused questions."""
