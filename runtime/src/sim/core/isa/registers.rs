//! The core's register files: every register the instruction-set tables
//! name, kept as its leaves (registers without sub-registers: `l0` is `r0`
//! and `r1`, `x0` is `wl0` and `wh0`), each leaf as 32-bit words. Writes
//! land at the cycle their itinerary gives (`timing::visible`); until then a
//! read sees the value before them, as the hardware's pipeline does.

use super::timing::{visible, Bypass};
use super::words::{copy_words, push_words, Words};
use loom_aie2p_isa::isa;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

/// One leaf: where its words are, and the bits a write keeps.
#[derive(Debug)]
struct Leaf {
    name: &'static str,
    word: usize,
    words: usize,
    mask: u32,
}

/// Where every register's leaves are, shared by all cores.
#[derive(Debug)]
struct Layout {
    leaves: Vec<Leaf>,
    /// Assembly name and record name -> leaf indices, lowest part first.
    by_name: HashMap<&'static str, Vec<usize>>,
    words: usize,
}

/// The register classes whose members' widths their names give (llvm-aie
/// AIE2PRegisterInfo.td: `VEC512` registers are 512 bits, ...); a leaf of
/// such a member has the member's width over its leaves. Every other leaf
/// is one 32-bit word.
fn class_bits(class: &str) -> Option<u32> {
    ["VEC", "ACC", "FIFO", "EXPVEC", "SPARSEVEC"]
        .iter()
        .find_map(|prefix| class.strip_prefix(prefix))
        .and_then(|digits| digits.parse().ok())
}

/// Classes of 20-bit registers (llvm-aie: pointers `eP`, and `eSpecial20`:
/// ls, lr, le, sp, core_id); a write keeps their low 20 bits.
const TWENTY_BIT_CLASSES: [&str; 2] = ["eP", "eSpecial20"];

/// The classes whose registers' leaves the layout places first, so that
/// each of them, their halves and quarters are one run: the vector unit's
/// `dm` accumulators and `y` vectors (`x` their halves).
const WHOLE_FIRST: [&str; 2] = ["ACC2048", "VEC1024"];

fn leaves_of(record: &'static str, out: &mut Vec<&'static str>) {
    match isa().register(record) {
        Some(r) if !r.subregs.is_empty() => {
            for sub in &r.subregs {
                leaves_of(sub, out);
            }
        }
        Some(_) => out.push(record),
        None => {}
    }
}

fn layout() -> &'static Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    LAYOUT.get_or_init(|| {
        let isa = isa();
        let mut records: Vec<(&'static str, &'static loom_aie2p_isa::Register)> =
            isa.registers().collect();
        records.sort_by_key(|(name, _)| *name);
        let mut bytes: HashMap<&'static str, u32> = HashMap::new();
        let mut masks: HashMap<&'static str, u32> = HashMap::new();
        for class in class_names() {
            let members = isa.class(class);
            if let Some(bits) = class_bits(class) {
                for member in members {
                    let mut leaves = Vec::new();
                    leaves_of(member, &mut leaves);
                    let each = (bits / 8 / leaves.len().max(1) as u32).max(4);
                    for leaf in leaves {
                        let entry = bytes.entry(leaf).or_insert(4);
                        *entry = (*entry).max(each);
                    }
                }
            }
            if TWENTY_BIT_CLASSES.contains(&class) {
                for member in members {
                    let mut leaves = Vec::new();
                    leaves_of(member, &mut leaves);
                    for leaf in leaves {
                        masks.insert(leaf, 0xF_FFFF);
                    }
                }
            }
        }
        // Leaves in the order of the widest accumulators' and vectors'
        // (`WHOLE_FIRST`), then of every register, each one's lowest
        // first: then a register's leaves, and their words, are one run
        // (`Run`), or a few where registers share leaves differently
        // (`ex0` is `x0` and `e0`, `ewh0` is `eh0` and `wh0`).
        let mut leaves = Vec::new();
        let mut index: HashMap<&'static str, usize> = HashMap::new();
        let mut words = 0;
        let first = WHOLE_FIRST.iter().flat_map(|class| isa.class(class));
        let order = first
            .map(String::as_str)
            .chain(records.iter().map(|(n, _)| *n));
        for register in order {
            let mut parts = Vec::new();
            leaves_of(register, &mut parts);
            for name in parts {
                if index.contains_key(name) {
                    continue;
                }
                let n = (bytes.get(name).copied().unwrap_or(4) / 4) as usize;
                index.insert(name, leaves.len());
                leaves.push(Leaf {
                    name,
                    word: words,
                    words: n,
                    mask: masks.get(name).copied().unwrap_or(u32::MAX),
                });
                words += n;
            }
        }
        let mut by_name: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (name, register) in &records {
            let mut parts = Vec::new();
            leaves_of(name, &mut parts);
            let ids: Vec<usize> = parts.iter().filter_map(|p| index.get(p).copied()).collect();
            by_name.entry(name).or_insert_with(|| ids.clone());
            by_name.entry(register.asm.as_str()).or_insert(ids);
        }
        Layout {
            leaves,
            by_name,
            words,
        }
    })
}

/// The class names the tables hold (for widths and masks).
fn class_names() -> Vec<&'static str> {
    let isa = isa();
    let mut names: Vec<&'static str> = isa
        .opcodes
        .iter()
        .flat_map(|o| o.operands.iter().map(|op| op.class.as_str()))
        .chain([
            "VEC128",
            "VEC256",
            "VEC512",
            "VEC576",
            "VEC1024",
            "ACC512",
            "ACC1024",
            "ACC2048",
            "FIFO512",
            "FIFO1024",
            "EXPVEC64",
            "SPARSEVEC640",
            "SPARSEVEC1280",
        ])
        .chain(TWENTY_BIT_CLASSES)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Consecutive leaves of a register, their words consecutive too (the
/// layout makes most registers one run): what one read or write moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Its first leaf and that leaf's first word in the register file.
    pub leaf: u32,
    pub word: u32,
    pub leaves: u16,
    pub words: u16,
    /// Whether a leaf of it keeps fewer than 32 bits (its writes are
    /// masked).
    masked: bool,
}

impl Run {
    pub fn leaves(self) -> Range<usize> {
        self.leaf as usize..self.leaf as usize + usize::from(self.leaves)
    }

    #[inline]
    pub fn has(self, leaf: usize) -> bool {
        // One comparison: below `self.leaf` wraps to a large number.
        (leaf as u32).wrapping_sub(self.leaf) < u32::from(self.leaves)
    }

    /// Its leaves as `leaf_bit`s.
    #[inline]
    pub fn bits(self) -> u64 {
        if self.leaves == 1 {
            return 1 << (self.leaf % 64);
        }
        let ones = u64::MAX >> (64 - u32::from(self.leaves.min(64)));
        ones.rotate_left(self.leaf % 64)
    }
}

/// A leaf's bit in a 64-bit set of leaves (leaves 64 apart share one: a
/// set bit means a search, a clear one that the leaf is not there).
pub fn leaf_bit(leaf: usize) -> u64 {
    1 << (leaf % 64)
}

/// The bits a write gives its run: a one-word run's word, or where its
/// words start in the buffer holding the write (the bundle's
/// `Effects::words`, then its ring bucket's), so that a write is small and
/// a wide one's words are copied once per buffer.
#[derive(Debug, Clone, Copy)]
pub enum Bits {
    Word(u32),
    At(u32),
}

/// A write that has not landed yet.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    /// The cycle it lands at (issue + the itinerary's def cycle).
    pub at: u64,
    pub run: Run,
    pub value: Bits,
    pub bypass: Bypass,
    /// The writing instruction: its bundle's address and its slot there.
    pub writer: u32,
    pub slot: usize,
}

/// A read of a register whose write had not landed: what it saw instead.
#[derive(Debug, Clone)]
pub struct Early {
    pub register: &'static str,
    pub write: Pending,
}

/// A write in flight and its place in issue order.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    issued: u64,
    write: Pending,
}

/// The writes landing in one cycle, in issue order, and their wide values.
#[derive(Debug, Clone, Default)]
struct Bucket {
    writes: Vec<InFlight>,
    words: Vec<u32>,
}

/// Cycles after its issue a write can land in (the itineraries' operand
/// cycles end by 9; `operands` refuses later ones at decode).
pub const WINDOW: u64 = 16;

#[derive(Debug, Clone)]
pub struct RegisterFile {
    /// `layout()`, kept so that an access does not check its `OnceLock`.
    layout: &'static Layout,
    values: Vec<u32>,
    /// Per landing cycle modulo `WINDOW`, the writes landing then: a write
    /// is queued and landed without moving the others, and a cycle's
    /// writes are found without a search.
    ring: [Bucket; WINDOW as usize],
    /// Every write landing before this cycle has landed (once a bundle has
    /// settled, the cycle after its issue); every write in flight lands
    /// within `WINDOW` cycles from it.
    settled: u64,
    /// Per bucket (bit `cycle % WINDOW`), whether writes land in it:
    /// settling visits only those.
    occupied: u16,
    /// Writes issued so far (the next one's `issued`).
    issued: u64,
    /// Per leaf, its writes in flight (most reads find none and look at
    /// nothing) and the last cycle one of them lands at (where a read's
    /// search of the ring ends).
    in_flight: Vec<u16>,
    last: Vec<u64>,
}

impl Default for RegisterFile {
    fn default() -> Self {
        Self::new()
    }
}

/// Mask the one-word leaves of `run` kept in `words` (its value, from its
/// first word) to the bits they keep.
fn keep_bits(layout: &Layout, run: Run, words: &mut [u32]) {
    if !run.masked {
        return;
    }
    for l in &layout.leaves[run.leaves()] {
        if l.words == 1 {
            words[l.word - run.word as usize] &= l.mask;
        }
    }
}

/// A write seen by a read: the write and the words of its bucket.
type Seen<'a> = Option<(&'a Pending, &'a [u32])>;

impl RegisterFile {
    pub fn new() -> RegisterFile {
        RegisterFile {
            layout: layout(),
            values: vec![0; layout().words],
            ring: std::array::from_fn(|_| Bucket::default()),
            settled: 0,
            occupied: 0,
            issued: 0,
            in_flight: vec![0; layout().leaves.len()],
            last: vec![0; layout().leaves.len()],
        }
    }

    /// The leaves of the register named `name` (assembly or record name).
    pub fn leaves(name: &str) -> Option<&'static [usize]> {
        layout()
            .by_name
            .get(name)
            .map(Vec::as_slice)
            .filter(|l| !l.is_empty())
    }

    /// `leaves` (a register's, lowest first) as runs of consecutive ones.
    pub fn runs(leaves: &[usize]) -> Vec<Run> {
        let layout = layout();
        let mut runs: Vec<Run> = Vec::new();
        for &leaf in leaves {
            let l = &layout.leaves[leaf];
            let masked = l.words == 1 && l.mask != u32::MAX;
            match runs.last_mut() {
                Some(run) if run.leaves().end == leaf => {
                    run.leaves += 1;
                    run.words += l.words as u16;
                    run.masked |= masked;
                }
                _ => runs.push(Run {
                    leaf: leaf as u32,
                    word: l.word as u32,
                    leaves: 1,
                    words: l.words as u16,
                    masked,
                }),
            }
        }
        runs
    }

    pub fn leaf_name(leaf: usize) -> &'static str {
        layout().leaves[leaf].name
    }

    /// Whether the leaf is one 32-bit word (the scalar files).
    pub fn is_word(leaf: usize) -> bool {
        layout().leaves[leaf].words == 1
    }

    /// The leaf's width in 32-bit words.
    pub fn words(leaf: usize) -> usize {
        layout().leaves[leaf].words
    }

    /// The write a read at cycle `at` (with `bypass`) sees, if any (else
    /// the committed value), and the first write that had not landed (a
    /// reference: building an `Early` on every read would copy the write).
    #[inline]
    fn seen(&self, leaf: usize, at: u64, bypass: Bypass) -> (Seen<'_>, Option<&Pending>) {
        if self.in_flight[leaf] == 0 {
            return (None, None);
        }
        self.seen_in_flight(leaf, at, bypass)
    }

    /// `seen` of a leaf with writes in flight (out of line: most reads
    /// find none).
    #[inline(never)]
    fn seen_in_flight(&self, leaf: usize, at: u64, bypass: Bypass) -> (Seen<'_>, Option<&Pending>) {
        // The last visible write to land, and the first issued of those
        // that have not.
        let mut seen: Seen = None;
        let mut early: Option<&InFlight> = None;
        // Cycle by cycle, each in issue order: the order they land in.
        for cycle in self.settled..=self.last[leaf] {
            let bucket = &self.ring[(cycle % WINDOW) as usize];
            for f in &bucket.writes {
                let p = &f.write;
                if !p.run.has(leaf) {
                    continue;
                }
                if visible(p.at, p.bypass, at, bypass) {
                    seen = Some((p, &bucket.words));
                } else if early.is_none_or(|e| f.issued < e.issued) {
                    early = Some(f);
                }
            }
        }
        (seen, early.map(|f| &f.write))
    }

    /// A leaf's words as a read that saw `seen` has them.
    #[inline]
    fn words_of<'s>(&'s self, leaf: usize, seen: Seen<'s>) -> &'s [u32] {
        let l = &self.layout.leaves[leaf];
        match seen {
            None => &self.values[l.word..l.word + l.words],
            Some((p, words)) => match &p.value {
                Bits::Word(v) => std::slice::from_ref(v),
                Bits::At(start) => {
                    let from = *start as usize + l.word - p.run.word as usize;
                    &words[from..from + l.words]
                }
            },
        }
    }

    /// The value of a one-word leaf as a read at cycle `at` (with
    /// `bypass`) sees it: the last write visible then, else the committed
    /// value; and the first write that had not landed, if any.
    #[inline]
    pub fn read(&self, leaf: usize, at: u64, bypass: Bypass) -> (u32, Option<&Pending>) {
        if self.in_flight[leaf] == 0 {
            return (self.values[self.layout.leaves[leaf].word], None);
        }
        self.read_in_flight(leaf, at, bypass)
    }

    /// `read` of a one-word run (its word known, not looked up).
    #[inline]
    pub fn read_word(&self, run: Run, at: u64, bypass: Bypass) -> (u32, Option<&Pending>) {
        let leaf = run.leaf as usize;
        if self.in_flight[leaf] == 0 {
            return (self.values[run.word as usize], None);
        }
        self.read_in_flight(leaf, at, bypass)
    }

    /// `read` of a leaf with writes in flight (out of line: most reads
    /// find none).
    #[inline(never)]
    fn read_in_flight(&self, leaf: usize, at: u64, bypass: Bypass) -> (u32, Option<&Pending>) {
        let (seen, early) = self.seen_in_flight(leaf, at, bypass);
        (self.words_of(leaf, seen)[0], early)
    }

    /// Whether a leaf of `run` has a write in flight.
    #[inline]
    pub fn any_in_flight(&self, run: Run) -> bool {
        match run.leaves {
            1 => self.in_flight[run.leaf as usize] != 0,
            _ => self.in_flight[run.leaves()].iter().any(|&n| n != 0),
        }
    }

    /// A run's words as `read` sees them, appended to `out`; the first of
    /// its leaves read early and the write it came too early for.
    #[inline(always)]
    pub fn read_run(
        &self,
        run: Run,
        at: u64,
        bypass: Bypass,
        out: &mut Words,
    ) -> Option<(usize, &Pending)> {
        if !self.any_in_flight(run) {
            let word = run.word as usize;
            out.extend_from_slice(&self.values[word..word + usize::from(run.words)]);
            return None;
        }
        self.read_run_in_flight(run, at, bypass, out)
    }

    /// `read_run` of a run with a leaf in flight: when one write of the
    /// whole run is all its leaves have in flight (the usual case), from
    /// that write or the committed words at once, else leaf by leaf.
    #[inline(never)]
    fn read_run_in_flight(
        &self,
        run: Run,
        at: u64,
        bypass: Bypass,
        out: &mut Words,
    ) -> Option<(usize, &Pending)> {
        if self.in_flight[run.leaves()].iter().all(|&n| n == 1) {
            let leaf = run.leaf as usize;
            let whole = (self.settled..=self.last[leaf]).find_map(|cycle| {
                let bucket = &self.ring[(cycle % WINDOW) as usize];
                let f = bucket.writes.iter().find(|f| f.write.run == run)?;
                Some((&f.write, &bucket.words))
            });
            if let Some((p, words)) = whole {
                if !visible(p.at, p.bypass, at, bypass) {
                    let word = run.word as usize;
                    out.extend_from_slice(&self.values[word..word + usize::from(run.words)]);
                    return Some((leaf, p));
                }
                match p.value {
                    Bits::Word(v) => out.extend_from_slice(&[v]),
                    Bits::At(start) => {
                        let start = start as usize;
                        out.extend_from_slice(&words[start..start + usize::from(run.words)]);
                    }
                }
                return None;
            }
        }
        let mut first = None;
        for leaf in run.leaves() {
            let (seen, early) = self.seen(leaf, at, bypass);
            out.extend_from_slice(self.words_of(leaf, seen));
            if let (None, Some(write)) = (first, early) {
                first = Some((leaf, write));
            }
        }
        first
    }

    /// What a read of `leaf` saw instead of `write`, which had not landed.
    pub fn early(leaf: usize, write: &Pending) -> Early {
        Early {
            register: Self::leaf_name(leaf),
            write: *write,
        }
    }

    /// A write already in flight to `leaf` landing at the same cycle.
    pub fn same_cycle(&self, leaf: usize, at: u64) -> Option<&Pending> {
        if self.in_flight[leaf] == 0 || !(self.settled..self.settled + WINDOW).contains(&at) {
            return None;
        }
        self.ring[(at % WINDOW) as usize]
            .writes
            .iter()
            .map(|f| &f.write)
            .find(|p| p.run.has(leaf))
    }

    /// Queue `write`, which lands at or after the settled cycle (the cycle
    /// after its issue, settled before it) and within `WINDOW` cycles of
    /// it; `words` holds its value if wide (`Bits::At`).
    #[inline]
    pub fn write(&mut self, write: &Pending, words: &[u32]) {
        let mut write = *write;
        let (run, at) = (write.run, write.at);
        assert!(
            (self.settled..self.settled + WINDOW).contains(&at),
            "a write landing at cycle {at}, the register file settled to {}",
            self.settled
        );
        let layout = self.layout;
        // A write landing the cycle after its issue, none of its leaves
        // with a write in flight, lands at once: every later read is at
        // least a cycle after that (operand cycles start at 1, `operands`),
        // so it sees the write, and no later write lands in its cycle.
        if at == self.settled && !self.any_in_flight(run) {
            let word = run.word as usize;
            match write.value {
                Bits::Word(v) if run.masked => {
                    self.values[word] = v & layout.leaves[run.leaf as usize].mask;
                }
                Bits::Word(v) => self.values[word] = v,
                Bits::At(start) => {
                    let (start, n) = (start as usize, usize::from(run.words));
                    let landed = &mut self.values[word..word + n];
                    copy_words(landed, &words[start..start + n]);
                    keep_bits(layout, run, landed);
                }
            }
            return;
        }
        let bucket = &mut self.ring[(at % WINDOW) as usize];
        match &mut write.value {
            Bits::Word(v) if run.masked => *v &= layout.leaves[run.leaf as usize].mask,
            Bits::Word(_) => {}
            Bits::At(start) => {
                let from = std::mem::replace(start, bucket.words.len() as u32) as usize;
                push_words(
                    &mut bucket.words,
                    &words[from..from + usize::from(run.words)],
                );
                keep_bits(layout, run, &mut bucket.words[*start as usize..]);
            }
        }
        let mut queued = |leaf: usize| {
            self.in_flight[leaf] += 1;
            self.last[leaf] = if self.in_flight[leaf] == 1 {
                at
            } else {
                self.last[leaf].max(at)
            };
        };
        // A word is one leaf: no loop.
        match write.value {
            Bits::Word(_) => queued(run.leaf as usize),
            Bits::At(_) => run.leaves().for_each(queued),
        }
        self.occupied |= 1 << (at % WINDOW);
        let issued = self.issued;
        self.issued += 1;
        bucket.writes.push(InFlight { issued, write });
    }

    /// Land every write whose cycle is at or before `issue`, the issue
    /// cycle of a bundle about to read: its reads, a cycle after issue or
    /// later (operand cycles start at 1, `operands`), and every later one
    /// see them whatever their bypass.
    pub fn settle(&mut self, issue: u64) {
        let (from, end) = (self.settled, issue.saturating_add(1));
        self.settled = from.max(end);
        let span = end.saturating_sub(from).min(WINDOW);
        if self.occupied == 0 || span == 0 {
            return;
        }
        // The buckets of cycles `from..end` holding writes, as bits from
        // `from`'s: cycle by cycle, each in issue order, so that of a
        // leaf's writes the last to land (among equal cycles the later
        // issued) gives its value.
        let shift = (from % WINDOW) as u32;
        let mut due = u32::from(self.occupied.rotate_right(shift)) & ((1 << span) - 1);
        while due != 0 {
            let bucket = (shift + due.trailing_zeros()) as usize % WINDOW as usize;
            due &= due - 1;
            self.occupied &= !(1 << bucket);
            let landing = &mut self.ring[bucket];
            for f in &landing.writes {
                let run = f.write.run;
                let word = run.word as usize;
                match f.write.value {
                    Bits::Word(v) => {
                        self.in_flight[run.leaf as usize] -= 1;
                        self.values[word] = v;
                    }
                    Bits::At(start) => {
                        for leaf in run.leaves() {
                            self.in_flight[leaf] -= 1;
                        }
                        let (start, n) = (start as usize, usize::from(run.words));
                        copy_words(
                            &mut self.values[word..word + n],
                            &landing.words[start..start + n],
                        );
                    }
                }
            }
            landing.writes.clear();
            landing.words.clear();
        }
    }

    /// The committed value of a register's first leaf word (tests and
    /// reports).
    #[cfg(test)]
    pub fn value(&self, name: &str) -> Option<u32> {
        let leaf = *Self::leaves(name)?.first()?;
        Some(self.values[layout().leaves[leaf].word])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(leaf: usize, at: u64, value: u32) -> Pending {
        Pending {
            at,
            run: RegisterFile::runs(&[leaf])[0],
            value: Bits::Word(value),
            bypass: Bypass::NONE,
            writer: 0,
            slot: 0,
        }
    }

    /// A pair is its two scalars; a pointer keeps 20 bits; of writes
    /// landing, the last to land wins, the later issued among equal cycles.
    #[test]
    fn leaves_masks_and_landing_order() {
        let l0 = RegisterFile::leaves("l0").unwrap();
        assert_eq!(
            l0,
            [
                RegisterFile::leaves("r0").unwrap()[0],
                RegisterFile::leaves("r1").unwrap()[0]
            ]
        );
        assert_eq!(RegisterFile::leaves("x0").map(<[usize]>::len), Some(2));
        let x_leaf = RegisterFile::leaves("wl0").unwrap()[0];
        assert!(!RegisterFile::is_word(x_leaf), "256-bit half of a vector");
        let (r0, p0) = (l0[0], RegisterFile::leaves("p0").unwrap()[0]);
        let mut regs = RegisterFile::new();
        regs.write(&write(p0, 3, 0xFFF_FFFF), &[]);
        regs.write(&write(r0, 9, 1), &[]);
        regs.write(&write(r0, 5, 2), &[]);
        regs.write(&write(r0, 9, 3), &[]);
        assert_eq!(
            regs.read(r0, 6, Bypass::NONE).0,
            2,
            "only the write at 5 has landed"
        );
        assert!(
            regs.read(r0, 6, Bypass::NONE).1.is_some(),
            "the writes at 9 are early"
        );
        regs.settle(100);
        assert_eq!(regs.value("r0"), Some(3));
        assert_eq!(regs.value("p0"), Some(0xF_FFFF));
    }

    /// A write landing the cycle after its issue lands at once unless a
    /// write of its register is in flight; then it waits its turn in the
    /// ring, and the last to land still gives the value.
    #[test]
    fn a_next_cycle_write_lands_at_once_unless_another_is_in_flight() {
        let r0 = RegisterFile::leaves("r0").unwrap()[0];
        let mut regs = RegisterFile::new();
        regs.settle(10);
        regs.write(&write(r0, 11, 7), &[]);
        assert_eq!(regs.value("r0"), Some(7), "landed at once");
        regs.write(&write(r0, 13, 1), &[]);
        regs.write(&write(r0, 11, 2), &[]);
        assert_eq!(regs.value("r0"), Some(7), "behind the write at 13");
        assert_eq!(regs.read(r0, 12, Bypass::NONE).0, 2);
        regs.settle(12);
        assert_eq!(regs.value("r0"), Some(2));
        regs.settle(14);
        assert_eq!(regs.value("r0"), Some(1));
    }

    /// The registers the code generator's vector code names are one run
    /// each (one read or write moves them); a register sharing leaves with
    /// others may be several, which still cover its leaves in order.
    #[test]
    fn registers_are_runs_of_their_leaves() {
        for name in [
            "dm0", "cml0", "cmh0", "bmll0", "y0", "x0", "x1", "wl0", "l0",
        ] {
            let leaves = RegisterFile::leaves(name).unwrap();
            let runs = RegisterFile::runs(leaves);
            assert_eq!(runs.len(), 1, "{name}");
            let words: usize = leaves.iter().map(|&l| RegisterFile::words(l)).sum();
            assert_eq!(usize::from(runs[0].words), words, "{name}");
        }
        for (name, _) in isa().registers() {
            let leaves = RegisterFile::leaves(name).unwrap_or(&[]);
            let covered: Vec<usize> = RegisterFile::runs(leaves)
                .iter()
                .flat_map(|r| r.leaves())
                .collect();
            assert_eq!(covered, leaves, "{name}");
        }
    }

    /// A wide write lands from its bucket, and a read of one of its leaves
    /// in flight sees that leaf's words.
    #[test]
    fn a_wide_write_lands_whole() {
        let leaves = RegisterFile::leaves("x0").unwrap();
        let run = RegisterFile::runs(leaves)[0];
        let value: Vec<u32> = (0..16).collect();
        let mut regs = RegisterFile::new();
        let wide = Pending {
            at: 2,
            run,
            value: Bits::At(0),
            bypass: Bypass::NONE,
            writer: 0,
            slot: 0,
        };
        regs.write(&wide, &value);
        let mut out = Words::zeroed(0);
        assert!(regs.read_run(run, 3, Bypass::NONE, &mut out).is_none());
        assert_eq!(&out[..], &value[..]);
        regs.settle(3);
        out.clear();
        assert!(regs.read_run(run, 3, Bypass::NONE, &mut out).is_none());
        assert_eq!(&out[..], &value[..]);
    }
}
