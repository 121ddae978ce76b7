"""What a plugin's bubblewrap sandbox binds (kernel/supervisor/sandbox.py): the system folders, the
Python roots, and a program's own roots, never a home or its direct children.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path

SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/mime.types",
    "/etc/os-release",
)


# --------------------------------------------------------------------------- what to bind


def _system_binds() -> list[str]:
    args = ["--proc", "/proc", "--dev", "/dev", "--ro-bind", "/usr", "/usr"]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    return args


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _covered(path: str, roots: Iterable[str]) -> bool:
    return any(_inside(path, root) for root in roots)


def _minimal(paths: Iterable[str]) -> list[str]:
    """Existing real paths, without those inside another one of the list, and never `/` itself."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)}, key=len)
    out: list[str] = []
    for path in real:
        if path != "/" and not _covered(path, out):
            out.append(path)
    return out


@functools.cache
def python_roots() -> tuple[str, ...]:
    """What the kernel's own interpreter needs to run a plugin: its prefixes, site-packages and the
    folders `.pth` files add, and the mrpvm protocol and plugins packages (wherever they live)."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    sites = [*site.getsitepackages(), site.getusersitepackages()]
    for folder in sites:
        if not os.path.isdir(folder):
            continue
        paths.append(folder)
        for pth in sorted(Path(folder).glob("*.pth")):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                for line in pth.read_text().splitlines():
                    line = line.strip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        paths.append(os.path.join(folder, line))
    for package in ("mrpvm.protocol", "mrpvm.plugins"):  # located, not imported
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.submodule_search_locations:
                paths.extend(spec.submodule_search_locations)
    return tuple(_minimal(paths))


def _homes() -> set[str]:
    """The home folders on this machine a program root must never expose: the kernel user's ($HOME and its
    account's), root's, and every folder under /home."""
    import pwd

    homes = {os.path.expanduser("~"), "/root"}
    with contextlib.suppress(KeyError):
        homes.add(pwd.getpwuid(os.geteuid()).pw_dir)
    with contextlib.suppress(OSError):
        homes.update(os.path.join("/home", name) for name in os.listdir("/home"))
    return {os.path.realpath(h) for h in homes if h and os.path.isabs(h) and os.path.realpath(h) != "/"}


def _exposes_a_home(folder: str, homes: Iterable[str]) -> bool:
    """A home, one of its direct children (~/bin, ~/.local, ~/.ssh's siblings), or a folder holding one."""
    return any(_inside(home, folder) or os.path.dirname(folder) == home or folder == home for home in homes)


def _program_roots(program: str) -> list[str]:
    """What a program other than the kernel's interpreter needs: its folder (its prefix if in a bin/). A
    program under a home never brings the home with it: where that folder would be a home or one of its
    direct children (~/bin/x, ~/.local/bin/x), only the program's file is bound."""
    if os.path.realpath(program) == os.path.realpath(sys.executable):
        return list(python_roots())
    real = os.path.realpath(program)
    folder = os.path.dirname(real)
    if os.path.basename(folder) == "bin":
        folder = os.path.dirname(folder)
    homes = _homes()
    if _exposes_a_home(folder, homes) or _exposes_a_home(os.path.dirname(real), homes):
        return [real]
    return [folder]


# --------------------------------------------------------------------------- the sandbox
