"""Maps the top-level folders kernel/, knowledge/, protocol/, plugins/, shells/ to mrpvm.kernel,
mrpvm.knowledge, mrpvm.protocol, mrpvm.plugins, mrpvm.shells.

Every folder of those trees is declared as a package, the data folders too (the LLM plugins' prompts/,
protocol/schema/, the web app's shells/api/web/), so their files ship as package data and setuptools has
nothing to warn about. The web app's vendor folders are named `<lib>-<version>` (not package names), so
their files are package data of `web.vendor` by a glob.
"""

from setuptools import find_namespace_packages, setup

ROOTS = {
    "kernel": "mrpvm.kernel",
    "knowledge": "mrpvm.knowledge",
    "protocol": "mrpvm.protocol",
    "plugins": "mrpvm.plugins",
    "shells": "mrpvm.shells",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for folder, name in ROOTS.items():
    package_dir[name] = folder
    packages.append(name)
    subs = find_namespace_packages(folder, exclude=["__pycache__", "*.__pycache__"])
    packages.extend(f"{name}.{sub}" for sub in subs)

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        "": ["*.md", "*.json", "*.txt", "*.html", "*.js", "*.mjs", "*.css", "*.svg"],
        "mrpvm.shells.api.web.vendor": ["*/*", "*/*/*"],
    },
)
