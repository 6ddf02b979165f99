//! The core's register files: every register the instruction-set tables
//! name, kept as its leaves (registers without sub-registers: `l0` is `r0`
//! and `r1`, `x0` is `wl0` and `wh0`), each leaf as 32-bit words. Writes
//! land at the cycle their itinerary gives (`timing::visible`); until then a
//! read sees the value before them, as the hardware's pipeline does.

use super::timing::{visible, Bypass};
use super::words::{copy_words, Words};
use loom_aie2p_isa::isa;
use std::collections::HashMap;
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
        let mut leaves = Vec::new();
        let mut index: HashMap<&'static str, usize> = HashMap::new();
        let mut words = 0;
        for (name, register) in &records {
            if register.subregs.is_empty() {
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

/// The widest leaf in words (512 bits: a quarter of `dm`, the halves of
/// `bm`); the layout's test checks that every leaf fits.
pub const LEAF_WORDS: usize = 16;

/// The bits a write gives one leaf: a word, or a wide leaf's words inline
/// (its first `RegisterFile::words(leaf)`), so a write allocates nothing.
#[derive(Debug, Clone)]
pub enum Bits {
    Word(u32),
    Wide([u32; LEAF_WORDS]),
}

/// A write that has not landed yet.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The cycle it lands at (issue + the itinerary's def cycle).
    pub at: u64,
    pub leaf: usize,
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
#[derive(Debug, Clone)]
struct InFlight {
    issued: u64,
    write: Pending,
}

/// Cycles after its issue a write can land in (the itineraries' operand
/// cycles end by 9; `operands` refuses later ones at decode).
pub const WINDOW: u64 = 16;

#[derive(Debug, Clone)]
pub struct RegisterFile {
    /// `layout()`, kept so that an access does not check its `OnceLock`.
    layout: &'static Layout,
    values: Vec<u32>,
    /// Per landing cycle modulo `WINDOW`, the writes landing then in issue
    /// order: a write is queued and landed without moving the others, and
    /// a cycle's writes are found without a search.
    ring: [Vec<InFlight>; WINDOW as usize],
    /// Every write landing before this cycle has landed; every write in
    /// flight lands within `WINDOW` cycles from it.
    settled: u64,
    /// Writes in flight.
    count: usize,
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

impl RegisterFile {
    pub fn new() -> RegisterFile {
        RegisterFile {
            layout: layout(),
            values: vec![0; layout().words],
            ring: std::array::from_fn(|_| Vec::new()),
            settled: 0,
            count: 0,
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
    /// reference: building an `Early` on every read would copy 100 bytes).
    #[inline]
    fn seen(&self, leaf: usize, at: u64, bypass: Bypass) -> (Option<&Pending>, Option<&Pending>) {
        if self.in_flight[leaf] == 0 {
            return (None, None);
        }
        self.seen_in_flight(leaf, at, bypass)
    }

    /// `seen` of a leaf with writes in flight (out of line: most reads
    /// find none).
    #[inline(never)]
    fn seen_in_flight(
        &self,
        leaf: usize,
        at: u64,
        bypass: Bypass,
    ) -> (Option<&Pending>, Option<&Pending>) {
        // The last visible write to land, and the first issued of those
        // that have not.
        let mut seen: Option<&Pending> = None;
        let mut early: Option<&InFlight> = None;
        // Cycle by cycle, each in issue order: the order they land in.
        for cycle in self.settled..=self.last[leaf] {
            for f in &self.ring[(cycle % WINDOW) as usize] {
                let p = &f.write;
                if p.leaf != leaf {
                    continue;
                }
                if visible(p.at, p.bypass, at, bypass) {
                    seen = Some(p);
                } else if early.is_none_or(|e| f.issued < e.issued) {
                    early = Some(f);
                }
            }
        }
        (seen, early.map(|f| &f.write))
    }

    /// The value of a one-word leaf as a read at cycle `at` (with
    /// `bypass`) sees it: the last write visible then, else the committed
    /// value; and the first write that had not landed, if any.
    #[inline]
    pub fn read(&self, leaf: usize, at: u64, bypass: Bypass) -> (u32, Option<&Pending>) {
        let word = self.layout.leaves[leaf].word;
        let (seen, early) = self.seen(leaf, at, bypass);
        let value = match seen.map(|p| &p.value) {
            Some(Bits::Word(v)) => *v,
            Some(Bits::Wide(v)) => v[0],
            None => self.values[word],
        };
        (value, early)
    }

    /// Any leaf's words as `read` sees them, appended to `out`.
    pub fn read_words(
        &self,
        leaf: usize,
        at: u64,
        bypass: Bypass,
        out: &mut Words,
    ) -> Option<&Pending> {
        let l = &self.layout.leaves[leaf];
        let (seen, early) = self.seen(leaf, at, bypass);
        match seen.map(|p| &p.value) {
            Some(Bits::Word(v)) => out.extend_from_slice(&[*v]),
            Some(Bits::Wide(v)) => out.extend_from_slice(&v[..l.words]),
            None => out.extend_from_slice(&self.values[l.word..l.word + l.words]),
        }
        early
    }

    /// What a read of `leaf` saw instead of `write`, which had not landed.
    pub fn early(leaf: usize, write: &Pending) -> Early {
        Early {
            register: Self::leaf_name(leaf),
            write: write.clone(),
        }
    }

    /// A write already in flight to `leaf` landing at the same cycle.
    pub fn same_cycle(&self, leaf: usize, at: u64) -> Option<&Pending> {
        if self.in_flight[leaf] == 0 || !(self.settled..self.settled + WINDOW).contains(&at) {
            return None;
        }
        self.ring[(at % WINDOW) as usize]
            .iter()
            .map(|f| &f.write)
            .find(|p| p.leaf == leaf)
    }

    /// Queue `write`, which lands after the last settled cycle (its issue
    /// cycle, settled before it) and within `WINDOW` cycles of it.
    pub fn write(&mut self, mut write: Pending) {
        let (leaf, at) = (write.leaf, write.at);
        assert!(
            (self.settled..self.settled + WINDOW).contains(&at),
            "a write landing at cycle {at}, the register file settled to {}",
            self.settled
        );
        if let Bits::Word(v) = &mut write.value {
            *v &= self.layout.leaves[leaf].mask;
        }
        self.in_flight[leaf] += 1;
        self.last[leaf] = if self.in_flight[leaf] == 1 {
            at
        } else {
            self.last[leaf].max(at)
        };
        self.count += 1;
        let issued = self.issued;
        self.issued += 1;
        self.ring[(at % WINDOW) as usize].push(InFlight { issued, write });
    }

    fn land(layout: &Layout, values: &mut [u32], write: &Pending) {
        let leaf = &layout.leaves[write.leaf];
        match &write.value {
            Bits::Word(v) => values[leaf.word] = *v,
            Bits::Wide(v) => copy_words(
                &mut values[leaf.word..leaf.word + leaf.words],
                &v[..leaf.words],
            ),
        }
    }

    /// Land every write whose cycle is before `now`: reads from `now` on
    /// see them whatever their bypass.
    pub fn settle(&mut self, now: u64) {
        let from = self.settled;
        self.settled = from.max(now);
        if self.count == 0 {
            return;
        }
        // Cycle by cycle, each in issue order, so that of a leaf's writes
        // the last to land (among equal cycles the later issued) gives its
        // value.
        for cycle in from..now.min(from + WINDOW) {
            let landing = &mut self.ring[(cycle % WINDOW) as usize];
            for f in landing.iter() {
                self.in_flight[f.write.leaf] -= 1;
                Self::land(self.layout, &mut self.values, &f.write);
            }
            self.count -= landing.len();
            landing.clear();
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
            leaf,
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
        regs.write(write(p0, 3, 0xFFF_FFFF));
        regs.write(write(r0, 9, 1));
        regs.write(write(r0, 5, 2));
        regs.write(write(r0, 9, 3));
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

    /// A wide write keeps its words inline (`Bits::Wide`): no leaf is wider.
    #[test]
    fn every_leaf_fits_inline() {
        assert!(layout().leaves.iter().all(|l| l.words <= LEAF_WORDS));
        assert_eq!(
            RegisterFile::words(RegisterFile::leaves("dm0").unwrap()[0]),
            LEAF_WORDS
        );
    }
}
