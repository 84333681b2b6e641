#!/usr/bin/env python3
"""The `layering` test: checks every #include "..." of lib/, include/, backends/ and
tools/ against the dependency table lib/layering.txt (the table the CMake libraries are
linked from), and that every cycle of that table is one it names.

A file belongs to a folder: lib/<f>/... and include/relax/<f>/... to <f>;
backends/<b>/... and tools/... to the longest table key that is a prefix of its path
(a file path, e.g. tools/relaxc/run_command.cc, can have its own line). An include is
allowed when it is a header of the file's own folder, or a public header
(include/relax/<g>/...) of a folder <g> the table lists for it. A private header of
another folder (lib/<g>/*.h, reached by a relative path) is never allowed.

Usage: check_layering.py [REPO_ROOT]. Exit 0 when clean, 1 with one line per problem
("file:line: ..."), 2 when the table itself is malformed.
"""

import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SCANNED = ("lib", "include", "backends", "tools")
SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".c", ".inc")


def read_table(path):
    """Returns ({folder: set(deps)}, [set(cycle members)])."""
    deps, cycles = {}, []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, rest = line.partition(":")
            if not sep or not key:
                sys.exit(f"{path}:{n}: expected 'folder: deps...', got {raw.strip()!r}")
            names = rest.split()
            if key == "cycle":
                cycles.append(set(names))
            elif key in deps:
                sys.exit(f"{path}:{n}: folder '{key}' listed twice")
            else:
                deps[key] = set(names)
    for key, ds in deps.items():
        for d in ds:
            if d not in deps:
                sys.exit(f"{path}: '{key}' depends on '{d}', which has no line of its own")
    for c in cycles:
        for d in c:
            if d not in deps:
                sys.exit(f"{path}: cycle names '{d}', which has no line of its own")
    return deps, cycles


def folder_of(rel, keys):
    """The table folder a repository-relative path belongs to (None: not layered)."""
    parts = rel.split("/")
    if parts[0] == "lib" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "relax"] and len(parts) > 3:
        return parts[2]
    best = None
    for k in keys:
        if (rel == k or rel.startswith(k + "/")) and (best is None or len(k) > len(best)):
            best = k
    return best


def strongly_connected(deps):
    """Groups (size > 1) of folders that reach each other."""
    reach = {}
    for start in deps:
        seen, todo = set(), [start]
        while todo:
            for d in deps[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        reach[start] = seen
    groups, done = [], set()
    for a in sorted(deps):
        if a in done:
            continue
        group = {a} | {b for b in reach[a] if a in reach[b]}
        done |= group
        if len(group) > 1:
            groups.append(group)
    return groups


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    table = os.path.join(root, "lib", "layering.txt")
    deps, cycles = read_table(table)
    keys = list(deps)
    problems = []

    for group in strongly_connected(deps):
        if group not in cycles:
            problems.append(f"lib/layering.txt: folders {' '.join(sorted(group))} depend on each "
                            "other and no 'cycle:' line names exactly this group (break the "
                            "cycle, or name it as debt)")
    for c in cycles:
        if c not in strongly_connected(deps):
            problems.append(f"lib/layering.txt: 'cycle: {' '.join(sorted(c))}' is not a cycle of "
                            "the table any more; update or remove the line")

    # Every file, for resolving relative includes.
    files = []
    for top in SCANNED:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(SUFFIXES):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    files.sort()
    file_set = set(files)

    for rel in files:
        src = folder_of(rel, keys)
        if src not in deps:
            problems.append(f"{rel}: its folder ('{src}') has no line in lib/layering.txt")
            continue
        allowed = deps[src]
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, text in enumerate(f, 1):
                m = INCLUDE_RE.match(text)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("relax/"):
                    target = os.path.join("include", inc)
                    if target not in file_set:
                        problems.append(f"{rel}:{n}: #include \"{inc}\": no such public header")
                        continue
                else:
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                    if target not in file_set:
                        # An include directory of the target (relax-run sees tools/relaxc).
                        hits = [p for p in files if p.endswith("/" + inc)]
                        if len(hits) != 1:
                            problems.append(f"{rel}:{n}: #include \"{inc}\": cannot tell which "
                                            "file this is; include public headers as "
                                            "\"relax/<folder>/...\"")
                            continue
                        target = hits[0]
                dst = folder_of(target, keys)
                if dst == src:
                    continue
                if target.startswith("lib/"):
                    problems.append(f"{rel}:{n}: #include \"{inc}\": private header of lib/{dst} "
                                    f"included from '{src}'; make it a public header "
                                    f"(include/relax/{dst}/) or move the code")
                elif dst not in allowed:
                    problems.append(f"{rel}:{n}: #include \"{inc}\": '{src}' may not depend on "
                                    f"'{dst}' (lib/layering.txt allows '{src}': "
                                    f"{' '.join(sorted(allowed)) or 'nothing'})")

    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} problem(s)")
        return 1
    print(f"layering: {len(files)} files, {len(deps)} folders, every include allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
