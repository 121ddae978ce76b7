"""Maps the top-level folders kernel/, protocol/, plugins/, shells/ to mrpvm.kernel, mrpvm.protocol,
mrpvm.plugins, mrpvm.shells."""

from setuptools import find_packages, setup

ROOTS = {
    "kernel": "mrpvm.kernel",
    "protocol": "mrpvm.protocol",
    "plugins": "mrpvm.plugins",
    "shells": "mrpvm.shells",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for folder, name in ROOTS.items():
    package_dir[name] = folder
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={"": ["*.md", "*.json", "*.txt", "prompts/*"]},
)
