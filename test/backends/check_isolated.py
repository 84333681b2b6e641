#!/usr/bin/env python3
"""A backend is one folder: for each test backend test/backends/<name>/, no file of the
repository outside that folder names it (case-insensitive), except the one registry,
test/backends/registry.cc. Adding a target touches nothing else: the shared compiler and
runtime ask the Backend and DeviceKernelAbi interfaces, never a target kind.

Usage: check_isolated.py [REPO_ROOT]. Exit 0 when clean, 1 with one line per file that names a
backend it should not.
"""
import os
import sys

SKIP_DIRS = {".git", "__pycache__"}
REGISTRY = os.path.join("test", "backends", "registry.cc")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    here = os.path.join(root, "test", "backends")
    names = sorted(d for d in os.listdir(here) if os.path.isdir(os.path.join(here, d))
                   and d not in SKIP_DIRS)
    if not names:
        print("FAIL: no test backend under test/backends/")
        return 1
    problems, scanned = [], 0
    for dirpath, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        # Build trees (any folder with a CMakeCache.txt) and VCS data are not sources.
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")
                   and not os.path.isfile(os.path.join(dirpath, d, "CMakeCache.txt"))]
        for f in files:
            rel = os.path.normpath(os.path.join(rel_dir, f))
            try:
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read().lower()
            except OSError:
                continue
            scanned += 1
            for name in names:
                if rel.startswith(os.path.join("test", "backends", name) + os.sep):
                    continue
                if name in text and rel != REGISTRY:
                    problems.append(f"{rel}: names test backend '{name}' (only its folder and "
                                    f"{REGISTRY} may)")
    for p in problems:
        print(p)
    print(f"{scanned} files scanned; backends {', '.join(names)}: "
          f"{'isolated' if not problems else f'{len(problems)} file(s) name them'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
