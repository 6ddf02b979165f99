#!/usr/bin/env python3
"""Check that two Loom IR text modules are equal up to renaming.

Usage: compare-modulo-renaming.py EXPECTED ACTUAL

Both files are normalized the same way and then compared line by line:
  1. blank lines and full-line `//` comments are dropped, trailing
     whitespace is stripped;
  2. the parameters of each outlined strand function (`@__pipeline_strand_N`)
     are reordered by first use in its body (unused ones last, in their
     original order), and every `func.call` of it is permuted to match;
  3. SSA values `%name` become `%vN` and block labels `^name` become `^bN`,
     numbered by first occurrence, restarting at each top-level op.
Exit 0 silently when equal; otherwise print a unified diff of the normalized
texts and exit 1. Exit 2 on usage errors or unreadable files.
"""
import argparse
import difflib
import re
import sys

NAME_CHAR = r"[A-Za-z0-9_$.]"
VALUE = re.compile(r"%" + NAME_CHAR + "+")
BLOCK = re.compile(r"\^" + NAME_CHAR + "+")
STRAND_DEF = re.compile(r"func\.def\b.*?@(__pipeline_strand_\d+)\(")
CALL = re.compile(r"func\.call @(__pipeline_strand_\d+)\(")


def matching_paren(text, open_idx):
    """Index of the `)` closing the `(` at open_idx."""
    depth = 0
    for i in range(open_idx, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses: {text}")


def split_top(text):
    """Split at commas outside any <...>, [...], (...) or {...}."""
    if not text.strip():
        return []
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ")]}" or (c == ">" and text[i - 1:i] != "-"):  # `->` is no bracket
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    return items + [text[start:].strip()]


def permute_group(line, open_idx, order):
    """Reorder the comma list in the parentheses opening at open_idx.

    Returns the new line and the index just after the closing parenthesis.
    """
    close = matching_paren(line, open_idx)
    items = split_top(line[open_idx + 1:close])
    if len(items) != len(order):
        return line, close + 1  # not a call we understand: leave it to the diff
    inner = ", ".join(items[i] for i in order)
    return line[:open_idx + 1] + inner + line[close:], open_idx + 1 + len(inner) + 1


def first_use(name, body):
    """(line, column) of the first whole-token use of %name in body."""
    token = re.compile(re.escape(name) + f"(?!{NAME_CHAR})")
    for n, line in enumerate(body):
        m = token.search(line)
        if m:
            return (n, m.start())
    return None


def reorder_strand_params(lines):
    # The order in which an outliner lists captured values is arbitrary;
    # order of first use in the body is a canonical choice both sides share.
    orders = {}
    for i, line in enumerate(lines):
        m = STRAND_DEF.match(line)
        if not m:
            continue
        body = []
        for body_line in lines[i + 1:]:
            body.append(body_line)
            if body_line == "}":
                break
        open_idx = m.end() - 1
        params = split_top(line[open_idx + 1:matching_paren(line, open_idx)])
        names = [p.split(":", 1)[0].strip() for p in params]
        uses = [first_use(name, body) for name in names]
        used = sorted((u, k) for k, u in enumerate(uses) if u is not None)
        order = [k for _, k in used] + [k for k, u in enumerate(uses) if u is None]
        orders[m.group(1)] = order
        lines[i], _ = permute_group(line, open_idx, order)
    # Calls may precede the definition, so they are fixed in a second pass.
    for i, line in enumerate(lines):
        m = CALL.search(line)
        if not m or m.group(1) not in orders:
            continue
        order = orders[m.group(1)]
        line, after = permute_group(line, m.end() - 1, order)
        types = line.find(": (", after)
        if types >= 0:
            line, _ = permute_group(line, types + 2, order)
        lines[i] = line
    return lines


def rename(lines):
    # The same source name may denote different values in different
    # functions, so numbering restarts at every top-level op.
    out, values, blocks = [], {}, {}
    for line in lines:
        if not line[0].isspace() and line != "}" and not line.startswith("^"):
            values, blocks = {}, {}
        line = VALUE.sub(lambda m: "%v" + str(values.setdefault(m.group(), len(values))), line)
        line = BLOCK.sub(lambda m: "^b" + str(blocks.setdefault(m.group(), len(blocks))), line)
        out.append(line)
    return out


def normalize(text):
    lines = [l.rstrip() for l in text.splitlines()]
    lines = [l for l in lines if l and not l.lstrip().startswith("//")]
    return rename(reorder_strand_params(lines))


def main():
    parser = argparse.ArgumentParser(
        description="Compare two Loom IR text modules modulo SSA/block renaming "
                    "and strand-function parameter order.")
    parser.add_argument("expected")
    parser.add_argument("actual")
    args = parser.parse_args()  # exits 2 on usage errors
    texts = []
    for path in (args.expected, args.actual):
        try:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        except (OSError, UnicodeDecodeError) as e:
            print(f"compare-modulo-renaming.py: cannot read {path}: {e}", file=sys.stderr)
            return 2
    try:
        expected, actual = (normalize(t) for t in texts)
    except ValueError as e:
        print(f"compare-modulo-renaming.py: {e}", file=sys.stderr)
        return 2
    if expected == actual:
        return 0
    for line in difflib.unified_diff(expected, actual, args.expected, args.actual, lineterm=""):
        print(line)
    return 1


if __name__ == "__main__":
    sys.exit(main())
