#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""layers.py - the file-level call graph of a C directory, its call circles, and its
layer order.

usage: layers.py [--table DOC.md] DIR [DIR ...]

For each directory, every function defined with external linkage in one of its .c
files is attributed to that file; a file "calls" another when its code (comments and
strings removed) names a function the other defines. Prints each directory's files in
an order where every file calls only files printed before it, or, when no such order
exists, the files of each circle and the calls that close it, and exits 1.

With --table, DOC.md places the files (it is read for the DIR that follows it). The
rows of its first table that names files in backquotes are read:

    | 3 | `link_tx.c` | what the file owns |    a file in layer 3
    | `send.c` | what the file owns | ... |    a file in the layer of its row's place

Every .c and .h file of DIR must be named in exactly one row, and every file a row names
must exist. Rows that start with a number give the layer; in a table whose rows give no
number, each row is a layer of its own, the first row the lowest (a file calls only the
files of the rows before it and of its own row). A file may call only functions defined
in files of its own layer or a lower one; each call upward is printed (caller, function,
both files and their layers) and makes the exit status 1. A layer above is reached through the
callbacks it registered, which are no call by name and do not show here.

In a table whose rows give numbers, includes are checked too: a file may include (by
`#include "x.h"`) only headers of its own layer or a lower one; each include of a
placed header of a higher layer is printed and makes the exit status 1. The headers of
INCLUDE_EXEMPT are the exception, by name: pme_core's pme.h (types and status codes)
and pme_internal.h (the endpoint's data) are read by every layer, and reading data is
no call (doc/design/core.md). In a table without numbers a row's place orders calls
only (the headers come last), so includes are not checked there.
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
# A table row of a design page: its cells; the files it names are in backquotes.
ROW = re.compile(r'^\|(.*)\|\s*$')
FILE_NAME = re.compile(r'`([\w.-]+\.[ch])`')
# An include of a header of the directory: #include "x.h".
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
# Headers any layer may include: data and types every layer reads, no functions to call
# (doc/design/core.md: "A header is placed with the code whose functions it declares").
INCLUDE_EXEMPT = ('pme.h', 'pme_internal.h')


def strip(src):
    return COMMENT_OR_STRING.sub(lambda m: ' ' if m.group(0).startswith('/') else '""', src)


def strip_comments(src):
    return COMMENT_OR_STRING.sub(lambda m: ' ' if m.group(0).startswith('/') else m.group(0),
                                 src)


def includes(directory, files):
    """{file: [header, ...]}: what each of files includes with #include "x.h"."""
    found = {}
    for name in files:
        with open(os.path.join(directory, name), encoding='utf-8') as f:
            found[name] = INCLUDE.findall(strip_comments(f.read()))
    return found


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


def read_table(doc):
    """({file: [layer or None, ...]}, whether the rows give numbers) from the rows of doc
    that name files."""
    placed, rows, numbered = {}, 0, False
    with open(doc, encoding='utf-8') as f:
        for line in f:
            m = ROW.match(line.strip())
            if not m:
                if rows:
                    break       # the first table that names files is the one
                continue
            cells = [c.strip() for c in m.group(1).split('|')]
            layer = None
            if len(cells) > 1 and cells[0].isdigit():
                layer, cells, numbered = int(cells[0]), cells[1:], True
            names = FILE_NAME.findall(cells[0])
            for name in names:
                placed.setdefault(name, []).append(layer if layer is not None else -1 - rows)
            rows += bool(names)
    # Without numbers, a row's place is its layer (-1 - place marks it so far).
    for name, ls in placed.items():
        placed[name] = [(-1 - l if not numbered else None) if l < 0 else l for l in ls]
    return placed, numbered


def check_table(d, doc, calls):
    """Print what is wrong with doc's placing of d's files; return the number of faults."""
    placed, numbered = read_table(doc)
    files = sorted(n for n in os.listdir(d) if n.endswith(('.c', '.h')))
    faults = 0
    for name in files:
        if name not in placed:
            print('%s: %s is not placed in %s: add a row for it' % (d, name, doc))
            faults += 1
        elif len(placed[name]) > 1:
            print('%s: %s has %d rows in %s: keep one' % (d, name, len(placed[name]), doc))
            faults += 1
    for name in sorted(set(placed) - set(files)):
        print('%s: %s names %s, which does not exist' % (d, doc, name))
        faults += 1
    layer = {n: ls[0] for n, ls in placed.items() if ls[0] is not None}
    if not layer:
        return faults
    for name in files:
        if name in placed and name not in layer:
            print('%s: %s has no layer in %s' % (d, name, doc))
            faults += 1
    for a in sorted(calls):
        for b, fn in sorted(calls[a].items()):
            if a in layer and b in layer and layer[b] > layer[a]:
                print('%s: upward call: %s (layer %d) calls %s, defined in %s (layer %d)' %
                      (d, a, layer[a], fn, b, layer[b]))
                faults += 1
    if not numbered:
        return faults
    for a, headers in sorted(includes(d, files).items()):
        for h in headers:
            if h in INCLUDE_EXEMPT or a not in layer or h not in layer:
                continue
            if layer[h] > layer[a]:
                print('%s: upward include: %s (layer %d) includes %s (layer %d)' %
                      (d, a, layer[a], h, layer[h]))
                faults += 1
    return faults


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


def main(args):
    status = 0
    doc = None
    for d in args:
        if d == '--table':
            doc = True
            continue
        if doc is True:
            doc = d
            continue
        calls = graph(d)
        if doc:
            faults = check_table(d, doc, calls)
            if faults:
                status = 1
            else:
                also = ''
                if read_table(doc)[1]:
                    also = (', no include upward (%s exempt)' %
                            ' and '.join(INCLUDE_EXEMPT))
                print('%s: every file placed in %s, no call upward%s' % (d, doc, also))
            doc = None
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
    if len(sys.argv) < 2 or sys.argv[-1] == '--table' or sys.argv[-2:-1] == ['--table']:
        sys.exit(__doc__.strip())
    sys.exit(main(sys.argv[1:]))
