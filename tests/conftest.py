"""Suite-wide test settings.

Hypothesis: no per-example deadline and no too-slow health check, because a loaded CI machine makes
both fail on speed, not on behaviour. Under CI (the `CI` variable is set) the examples are also
derandomized, so a run on main is reproducible; locally every run explores new examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "mrpvm",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
    print_blob=True,
)
settings.load_profile("mrpvm")
