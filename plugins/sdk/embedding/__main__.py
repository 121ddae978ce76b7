"""`python -m mrpvm.plugins.sdk.embedding`: build the model's optimised graph into its cache folder (make setup
runs it) and print the folder."""

import sys

from .cache import cache_dir
from .encoder import Encoder, missing_reason
from .weights import model_zip

if __name__ == "__main__":
    reason = missing_reason()
    model = model_zip()
    if reason or model is None:
        print(f"note: {reason}", file=sys.stderr)
        sys.exit(0)
    Encoder()
    folder = cache_dir(model)
    print(
        folder if folder.is_dir() else f"note: {folder.parent} is not writable: each worker builds the graph"
    )
