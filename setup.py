"""Maps the top-level folders kernel/, protocol/, plugins/ to mrpvm.kernel, mrpvm.protocol, mrpvm.plugins."""

from setuptools import find_packages, setup

ROOTS = {"kernel": "mrpvm.kernel", "protocol": "mrpvm.protocol", "plugins": "mrpvm.plugins"}

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
