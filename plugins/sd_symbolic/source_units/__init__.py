"""sd-symbolic's second job, normalizePersistentContext: a source text becomes a hierarchical KU tree.

Entry point: `assemble.build_tree` (`tree` makes a section's units). `blocks` and `outline` read the text's layout (Markdown or plain text),
`entries` its FAQ entries and footnotes, `sections` cuts it into composite spans, `pieces` and `grouping`
turn sentences into atomic-unit specs, `summarize` writes the extractive summaries. Uses `..shared`,
never `..turn_seeds`.
"""
