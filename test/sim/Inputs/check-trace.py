"""Checks a Chrome/Perfetto trace (the Trace Event Format's JSON object form)
as ui.perfetto.dev and chrome://tracing read it: every event has its fields
with their types, every track used is named, slices on one track do not
overlap. Prints one line a track: `<process> / <track>: <slices> slices`."""
import json
import sys

trace = json.load(open(sys.argv[1], encoding="utf-8"))
events = trace["traceEvents"]
assert isinstance(events, list) and events, "no traceEvents"
names = {}
slices = {}
for e in events:
    for field, kind in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
        assert isinstance(e.get(field), kind), "event %r: %s is not %s" % (e, field, kind.__name__)
    if e["ph"] == "M":
        assert e["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index"), e
        if e["name"] in ("process_name", "thread_name"):
            names[(e["pid"], e["tid"] if e["name"] == "thread_name" else None)] = e["args"]["name"]
    elif e["ph"] == "X":
        for field in ("ts", "dur"):
            assert isinstance(e.get(field), (int, float)) and e[field] >= 0, "event %r: %s" % (e, field)
        slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    else:
        raise AssertionError("unexpected phase %r" % e["ph"])
for (pid, tid), spans in sorted(slices.items()):
    assert (pid, tid) in names and (pid, None) in names, "track %d/%d has no name" % (pid, tid)
    spans.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        assert b0 >= a1, "track %s: %s [%s, %s) overlaps %s [%s, %s)" % (names[(pid, tid)], an, a0, a1, bn, b0, b1)
    print("%s / %s: %d slices" % (names[(pid, None)], names[(pid, tid)], len(spans)))
