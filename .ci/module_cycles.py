#!/usr/bin/env python3
"""Prints the import graph between a crate's top-level modules and its cycles.

usage: module_cycles.py [-v] <crate>/src [...]   exit 1 when a cycle exists
(-v prints every module's imports too)

A module is a top-level file or folder of `src`; an edge a -> b is a path
`crate::b` (also inside `use crate::{b, ...}`) in a's code before its first
`#[cfg(test)]` line, so tests may reach across layers.
"""
import os
import re
import sys


def code_of(path):
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    return re.sub(r"//[^\n]*", "", text)


def top_level_paths(code):
    """In `use crate::{a::x, b}` keep a and b only."""
    out = set(re.findall(r"\bcrate::(\w+)", code))
    for m in re.finditer(r"\bcrate::\{", code):
        depth, i, start = 1, m.end(), True
        token = ""
        while i < len(code) and depth:
            c = code[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0 and token and start_token:
                    out.add(token)
            if depth == 1:
                if c.isalnum() or c == "_":
                    if start:
                        start_token = True
                        start = False
                        token = ""
                    if start_token:
                        token += c
                elif c == ",":
                    if token and start_token:
                        out.add(token)
                    token, start, start_token = "", True, False
                elif c == ":" and token:
                    if start_token:
                        out.add(token)
                    start_token = False
            i += 1
    return out


def graph(src):
    modules = {}
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        name = entry[:-3] if entry.endswith(".rs") else entry
        if name in ("lib", "main"):
            continue
        files = []
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                files += [os.path.join(root, n) for n in names if n.endswith(".rs")]
        elif entry.endswith(".rs"):
            files = [path]
        else:
            continue
        modules.setdefault(name, set())
        for f in files:
            modules[name] |= top_level_paths(code_of(f))
    return {m: sorted(t for t in deps if t in modules and t != m) for m, deps in modules.items()}


def cycles(g):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    return out


def main():
    bad = False
    args = sys.argv[1:]
    verbose = "-v" in args
    for src in (a for a in args if a != "-v"):
        g = graph(src)
        print(f"# {src}")
        for m, deps in sorted(g.items()):
            if verbose:
                print(f"  {m} -> {', '.join(deps) if deps else '-'}")
        found = cycles(g)
        for comp in found:
            pairs = [f"{a}->{b}" for a in comp for b in g[a] if b in comp]
            print(f"  CYCLE {{{', '.join(comp)}}}: {' '.join(pairs)}")
        print(f"  {len(found)} cycle(s)")
        bad |= bool(found)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
