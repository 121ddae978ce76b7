"""`python -m mrpvm.plugins.sdk.embedding`: build the model's optimised graphs (float32 and int8, quantize.py)
into their cache folders (make setup runs it) and print the folder of the precision in use."""

import sys

from .cache import cache_dir
from .encoder import Encoder, missing_reason
from .quantize import FLOAT, INT8
from .weights import model_zip

if __name__ == "__main__":
    reason = missing_reason()
    model = model_zip()
    if reason or model is None:
        print(f"note: {reason}", file=sys.stderr)
        sys.exit(0)
    for kind in (FLOAT, INT8):
        Encoder(kind=kind)
    folder = cache_dir(model)
    print(
        folder if folder.is_dir() else f"note: {folder.parent} is not writable: each worker builds the graph"
    )
