#!/usr/bin/env python3
"""Package.swift's dependencies must equal the imports.

For every Swift target of the package (`swift package dump-package`, so the Linux-only targets
appended at the end of Package.swift count too), compares the package modules its sources
import with the targets it declares as dependencies, and fails listing each difference:
an import of a package module that is not declared (it builds today only because something
else pulled the module in), or a declared dependency no source file imports (it links what the
module never uses). Toolchain modules (Foundation, Testing, Glibc…) are not package targets
and are ignored. Plugins and executables used as plugin tools are not checked.

Run by `make test`; on its own: `scripts/check-imports.py` from the package root.
"""
import json
import os
import re
import subprocess
import sys

# `import X`, `@testable import X`, `public import X`, `import struct X.Y`, `@_exported import X`.
IMPORT = re.compile(
    r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|typealias|func|let|var)\s+)?([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE,
)


def target_path(target):
    if target.get("path"):
        return target["path"]
    root = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(root, target["name"])


def imports_in(path, excluded):
    found = {}
    for directory, _, files in os.walk(path):
        if any(os.path.commonpath([directory, e]) == e for e in excluded):
            continue
        for name in files:
            if not name.endswith(".swift"):
                continue
            file = os.path.join(directory, name)
            with open(file, encoding="utf-8") as source:
                for module in IMPORT.findall(source.read()):
                    found.setdefault(module, file)
    return found


def main():
    dump = subprocess.run(
        ["swift", "package", "dump-package"], check=True, capture_output=True, text=True
    ).stdout
    package = json.loads(dump)
    targets = {t["name"]: t for t in package["targets"]}
    failures = []
    for name, target in sorted(targets.items()):
        if target["type"] in ("system", "plugin", "binary", "macro"):
            continue
        path = target_path(target)
        excluded = [os.path.join(path, e) for e in target.get("exclude", [])]
        imported = {
            module: file
            for module, file in imports_in(path, excluded).items()
            if module in targets and module != name
        }
        declared = set()
        for dependency in target["dependencies"]:
            (kind, value), = dependency.items()
            if kind in ("byName", "target"):
                declared.add(value[0])
        for module in sorted(set(imported) - declared):
            failures.append(f"{name}: imports {module} ({imported[module]}) but does not declare it")
        for module in sorted(declared - set(imported)):
            if targets.get(module, {}).get("type") == "executable":
                continue  # a tool the target runs (a built binary), not a module it imports
            failures.append(f"{name}: declares {module} but no file imports it")
    if failures:
        print("Package.swift dependencies differ from the imports:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        return 1
    print(f"imports: {len(targets)} targets, every declared dependency imported and every import declared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
