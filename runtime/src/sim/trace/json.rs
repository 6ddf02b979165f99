//! Traces as Trace Event Format JSON, the JSON Object Format that
//! ui.perfetto.dev and chrome://tracing open: `{"traceEvents": [...],
//! "displayTimeUnit": "ms", "otherData": {...}}`. Each run is a process
//! (pid 1, 2, ...), each of its tracks a thread (tid 1, 2, ... in track
//! order), named by metadata events (`"ph":"M"`); each slice is a complete
//! event (`"ph":"X"`, `ts` and `dur`).
//!
//! Time: `ts` and `dur` count modelled cycles, one cycle written as one
//! microsecond (the format's unit), so a viewer's "1 ms" is 1,000 cycles.
//! They are not converted to seconds at a clock: the cycles are what the
//! model computes (silicon's 1.8 GHz would make them look measured).
//!
//! Written by hand (loom-runtime has no JSON dependency); the same traces
//! give the same bytes: tracks in their order, slices sorted by track,
//! begin, end and name, one event per line.

use super::{Arg, Slice, Trace};
use std::fmt::Write;

/// What `otherData` says about the clock.
pub const CLOCK: &str = "ts and dur are modelled cycles of the array simulator, one cycle \
                         written as one microsecond; not converted at a clock";

/// The Trace Event Format file of `runs`: each a name (the scenario, say)
/// and its trace.
pub fn write(runs: &[(&str, &Trace)]) -> String {
    let mut events: Vec<String> = Vec::new();
    for (index, (run, trace)) in runs.iter().enumerate() {
        let pid = index + 1;
        let process = if run.is_empty() {
            format!("array {}", trace.profile)
        } else {
            format!("{run}: array {}", trace.profile)
        };
        events.push(metadata(pid, 0, "process_name", "name", &text(&process)));
        events.push(metadata(
            pid,
            0,
            "process_sort_index",
            "sort_index",
            &pid.to_string(),
        ));
        let mut tids = std::collections::BTreeMap::new();
        for (i, (track, name)) in trace.tracks.iter().enumerate() {
            let tid = i + 1;
            tids.insert(*track, tid);
            events.push(metadata(pid, tid, "thread_name", "name", &text(name)));
            events.push(metadata(
                pid,
                tid,
                "thread_sort_index",
                "sort_index",
                &tid.to_string(),
            ));
        }
        let mut slices: Vec<&Slice> = trace.slices.iter().collect();
        slices.sort_by(|a, b| {
            (a.track, a.begin, a.end, &a.name).cmp(&(b.track, b.begin, b.end, &b.name))
        });
        for slice in slices {
            // Every slice's track was named when it was added.
            let tid = tids.get(&slice.track).copied().unwrap_or(0);
            events.push(complete(pid, tid, slice));
        }
    }
    let profiles: Vec<&str> = runs.iter().map(|(_, t)| t.profile.as_str()).collect();
    let mut out = String::from("{\"traceEvents\":[\n");
    out.push_str(&events.join(",\n"));
    let _ = write!(
        out,
        "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"clock\":{},\"profiles\":{}}}}}\n",
        text(CLOCK),
        text(&profiles.join(", "))
    );
    out
}

/// A metadata event naming (or ordering) a process or thread.
fn metadata(pid: usize, tid: usize, name: &str, key: &str, value: &str) -> String {
    format!(
        "{{\"name\":\"{name}\",\"ph\":\"M\",\"ts\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"{key}\":{value}}}}}"
    )
}

/// A complete event: the slice from `ts` for `dur` cycles.
fn complete(pid: usize, tid: usize, slice: &Slice) -> String {
    let mut args = String::new();
    for (i, (key, value)) in slice.args.iter().enumerate() {
        if i > 0 {
            args.push(',');
        }
        let value = match value {
            Arg::Int(n) => n.to_string(),
            Arg::Text(s) => text(s),
        };
        let _ = write!(args, "{}:{value}", text(key));
    }
    format!(
        "{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
        text(&slice.name),
        text(slice.kind.name()),
        slice.begin,
        slice.end.saturating_sub(slice.begin),
    )
}

/// `s` as a JSON string: quotes, backslashes and control characters
/// escaped, everything else as UTF-8.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::trace::{Kind, Track};
    use loom_targets::Tile;

    fn one_slice(profile: &str, track: Track) -> Trace {
        let mut trace = Trace::new(profile);
        let slice = Slice {
            track,
            kind: Kind::Compute,
            name: "compute".into(),
            begin: 3,
            end: 10,
            args: vec![("worker", Arg::Text("w".into())), ("n", Arg::Int(2))],
        };
        trace.slice(slice, || "tile [0, 2] core".into());
        trace
    }

    #[test]
    fn each_run_is_a_process_and_each_track_a_thread() {
        let a = one_slice("p", Track::Core(Tile::new(0, 2), 0));
        let b = one_slice("q", Track::Control);
        let text = write(&[("a", &a), ("b", &b)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "{\"traceEvents\":[");
        assert_eq!(
            lines[1],
            "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":0,\"args\":{\"name\":\"a: array p\"}},"
        );
        assert_eq!(
            lines[5],
            "{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"ts\":3,\"dur\":7,\"pid\":1,\"tid\":1,\"args\":{\"worker\":\"w\",\"n\":2}},"
        );
        assert!(lines[6].contains("\"pid\":2") && lines[6].contains("b: array q"));
        assert!(lines[10].contains("\"pid\":2,\"tid\":1"), "{}", lines[10]);
        assert_eq!(lines.len(), 12);
        assert!(
            lines[11].ends_with("\"profiles\":\"p, q\"}}"),
            "{}",
            lines[11]
        );
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(text("a\"b\\c\nd\u{1}µ"), "\"a\\\"b\\\\c\\nd\\u0001µ\"");
    }
}
