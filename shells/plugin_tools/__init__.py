"""Plugin tooling for authors and operators: run one plugin, check its conformance, find and list plugins."""
