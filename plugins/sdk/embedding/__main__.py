"""`python -m mrpvm.plugins.sdk.embedding`: build the model's ONNX graph into its cache (make setup runs it)."""

import sys

from .encoder import cache_path, cached_graph, missing_reason
from .weights import model_zip

if __name__ == "__main__":
    reason = missing_reason()
    model = model_zip()
    if reason or model is None:
        print(f"note: {reason}", file=sys.stderr)
        sys.exit(0)
    graph, _ = cached_graph(model)
    print(cache_path(model) if isinstance(graph, str) else "note: the graph cache folder is not writable")
