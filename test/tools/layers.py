#!/usr/bin/env python3
"""layers.py - the file-level call graph of a C directory, and its call circles.

usage: layers.py DIR [DIR ...]

For each directory, every function defined with external linkage in one of its .c
files is attributed to that file; a file "calls" another when its code (comments and
strings removed) names a function the other defines. Prints each directory's files in
an order where every file calls only files printed before it, or, when no such order
exists, the files of each circle and the calls that close it, and exits 1.
"""
import os
import re
import sys

COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                               re.S)
# A definition starts at column 0: return type words, the name, '(' (MPICH and
# kernel style both put a function's name on the line of its type).
DEFINITION = re.compile(r'^(?!static\b)(?:[A-Za-z_][\w ]*?[\s*]+)(\w+)\s*\([^;{]*\)\s*\{',
                        re.M)
CALL = re.compile(r'\b(\w+)\s*\(')


def strip(src):
    return COMMENT_OR_STRING.sub(lambda m: ' ' if m.group(0).startswith('/') else '""', src)


def graph(directory):
    code = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith('.c'):
            with open(os.path.join(directory, name), encoding='utf-8') as f:
                code[name] = strip(f.read())
    owner = {}
    for name, src in code.items():
        for m in DEFINITION.finditer(src):
            owner.setdefault(m.group(1), name)
    calls = {name: {} for name in code}
    for name, src in code.items():
        for m in CALL.finditer(src):
            target = owner.get(m.group(1))
            if target and target != name:
                calls[name].setdefault(target, m.group(1))
    return calls


def circles(calls):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in calls[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in calls:
        if v not in index:
            visit(v)
    return found


def order(calls):
    done, out = set(), []
    while len(out) < len(calls):
        ready = [f for f in sorted(calls) if f not in done and set(calls[f]) <= done]
        out.extend(ready)
        done.update(ready)
    return out


def main(dirs):
    status = 0
    for d in dirs:
        calls = graph(d)
        found = circles(calls)
        if not found:
            print('%s: %d files, no call circle; bottom up: %s' %
                  (d, len(calls), ' '.join(order(calls))))
            continue
        status = 1
        for comp in found:
            print('%s: call circle between %s:' % (d, ', '.join(comp)))
            for a in comp:
                for b, fn in sorted(calls[a].items()):
                    if b in comp:
                        print('    %s calls %s (%s)' % (a, fn, b))
    return status


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    sys.exit(main(sys.argv[1:]))
