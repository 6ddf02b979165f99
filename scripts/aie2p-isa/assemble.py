#!/usr/bin/env python3
"""Join downloaded 16,000-character pages of a file and apply the documented excerpt filters.

    assemble.py OUT PAGE [PAGE...]           join pages verbatim (a whole file)
    assemble.py --regpairs OUT PAGE [...]    join, then drop TableGen ItinRegClassPair lists

The pages are what the source index returns for offsets 0, 16000, 32000, ... (see README.md).
`--regpairs` is the filter used for AIE2PGenInstrInfo.td: every line starting with
`ItinRegClassPair<` (the per-register-class itinerary variants inside `ItineraryRegPairs = [...]`)
is dropped; the text after the list's closing `]` on its last line is kept behind a
`/*elided*/` marker, so `ItineraryRegPairs = [<pairs>], mayLoad = true in` becomes
`ItineraryRegPairs = [\n/*elided*/], mayLoad = true in`. It also drops the generated
`// id: ...` comment lines (the instruction's path in the ISA description tree; no encoding
fact). Pages already written in that form pass through unchanged (the filter is idempotent).
Nothing else is changed.
"""
import sys


def regpairs_filter(text):
    out, dropping = [], False
    for line in text.split("\n"):
        if line.startswith("// id: "):
            continue
        if line.startswith("ItinRegClassPair<"):
            if "/*elided*/" in line:
                out.append(line[line.index("/*elided*/"):])
                dropping = False
            elif "]>]" in line:
                out.append("/*elided*/" + line[line.index("]>]") + 2:])
                dropping = False
            else:
                dropping = True
            continue
        out.append(line)
    if dropping:
        raise SystemExit("an ItinRegClassPair list is not closed at the end of the input")
    return "\n".join(out)


def main(argv):
    regpairs = False
    if argv and argv[0] == "--regpairs":
        regpairs, argv = True, argv[1:]
    if len(argv) < 2:
        raise SystemExit(__doc__)
    out, pages = argv[0], argv[1:]
    text = "".join(open(p, encoding="utf-8").read() for p in pages)
    if regpairs:
        text = regpairs_filter(text)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
