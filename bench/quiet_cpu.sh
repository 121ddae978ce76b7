#!/bin/sh
# quiet_cpu.sh COMMAND...: run COMMAND (and every process it starts) in a cgroup-v1 `cpu` group of the
# highest weight (cpu.shares 262144 against 1024 for each autogroup of the root group), so on a shared,
# saturated machine a benchmark gets nearly the whole CPU whenever it is runnable: an approximation of a
# quiet host (caches, memory bandwidth and the other processes' short bursts still differ). Needs root and
# a cgroup-v1 `cpu` hierarchy at /sys/fs/cgroup/cpu; anything else runs COMMAND unchanged, with a note.
# Compare checkouts alternately inside it (hyperfine, bench/cold_ask_*.py): only a same-minutes A/B holds.
group=/sys/fs/cgroup/cpu/mrpvm-bench-quiet
if mkdir -p "$group" 2>/dev/null && echo 262144 > "$group/cpu.shares" 2>/dev/null \
    && echo $$ > "$group/cgroup.procs" 2>/dev/null; then
    :
else
    echo "quiet_cpu.sh: no writable cgroup-v1 cpu group; running at the ordinary weight" >&2
fi
exec "$@"
