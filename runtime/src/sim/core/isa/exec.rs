//! What one instruction of a bundle may do, as the semantics see it: read
//! its operands at their use cycles, load from the data views, and queue
//! its effects (register writes at their def cycles, stores, a lock
//! request, a control transfer), which the bundle commits together after
//! every slot has read its operands.

use super::neighbours::{view_of, Views};
use super::operands::{Name, Operands, Resolved};
use super::registers::{Bits, Early, Pending, RegisterFile, Run};
use super::timing::Bypass;
use super::words::{push_words, Words};
use loom_targets::{DeviceProfile, Tile};
use std::collections::BTreeMap;
use std::ops::Range;

/// What an instruction does when it executes (`semantics::of`).
pub type Semantics = fn(&mut Exec) -> Result<(), String>;

/// A lock request: acquire (value -N: wait for >= N, take N; N >= 0: wait
/// for == N) or release (add the value).
#[derive(Debug, Clone)]
pub struct LockRequest {
    pub acquire: bool,
    pub id: u32,
    pub tile: Tile,
    pub lock: u32,
    pub value: i32,
}

/// What a bundle does once it commits.
#[derive(Debug, Default)]
pub struct Effects {
    pub writes: Vec<Pending>,
    /// The words of the wide writes (`Bits::At`), one after the other.
    pub words: Vec<u32>,
    /// (tile, byte offset, its bytes' range in `stored`).
    pub stores: Vec<(Tile, usize, Range<usize>)>,
    /// The bytes of every store, one after the other (one buffer, so a
    /// store allocates nothing).
    pub stored: Vec<u8>,
    pub lock: Option<LockRequest>,
    /// A control transfer: its target, or None for one not taken.
    pub transfer: Option<Option<u32>>,
    pub done: bool,
    pub events: u64,
    /// Reads at a use cycle after issue + 1, which a later bundle's write
    /// could land before.
    pub late_reads: Vec<LateRead>,
    /// Not an effect: the vector instructions' buffers while none has
    /// them (`Exec::take_words`), kept with the bundle's other buffers.
    pub vectors: Option<Box<VectorBuffers>>,
}

impl Effects {
    /// Empty, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.writes.clear();
        self.words.clear();
        self.stores.clear();
        self.stored.clear();
        self.lock = None;
        self.transfer = None;
        self.done = false;
        self.events = 0;
        self.late_reads.clear();
    }
}

/// A read the model makes at issue but the hardware at `at`.
#[derive(Debug, Clone)]
pub struct LateRead {
    pub run: Run,
    pub at: u64,
    pub bypass: Bypass,
    pub reader: u32,
    pub slot: usize,
}

/// Why `operand`, not a one-word register (nor, read, an immediate),
/// cannot be `access`ed as a word: out of line, so that the hot reads and
/// writes carry no formatting in their frames.
#[cold]
#[inline(never)]
fn not_a_word(operand: &Resolved, name: &str, access: &str) -> String {
    match operand {
        Resolved::Wide { words, .. } => format!(
            "operand `{name}` is {} bits wide where a 32-bit value is {access}",
            32 * words
        ),
        Resolved::Unusable(why) => why.clone(),
        Resolved::Immediate(_) | Resolved::Register { .. } => {
            format!("operand `{name}` is an immediate")
        }
    }
}

/// One instruction being executed.
pub struct Exec<'a> {
    pub profile: &'static DeviceProfile,
    pub tile: Tile,
    /// The tiles the core's data views reach.
    pub views: &'a Views,
    pub regs: &'a RegisterFile,
    pub memories: &'a BTreeMap<Tile, Vec<u8>>,
    /// The bundle's issue cycle and address.
    pub cycle: u64,
    pub address: u32,
    /// The instruction's slot index among the bundle's non-NOPs, and its
    /// operands.
    pub slot: usize,
    pub operands: &'a Operands,
    /// The address after the delay slots of a control transfer in this
    /// bundle (a `jl`'s return address), when it could be decoded.
    pub after_delay_slots: &'a Result<u32, String>,
    pub effects: &'a mut Effects,
    /// Reads that came before a write they depend on landed: the read's
    /// cycle, the write, the reading slot's index.
    pub early: &'a mut Vec<(u64, Early, usize)>,
}

/// Three vector values, reused from bundle to bundle: a vector instruction
/// reads its operands into them and computes there instead of building
/// (zeroing) and moving 264-byte `Words`.
pub type VectorBuffers = [Words; 3];

impl<'a> Exec<'a> {
    /// The vector buffers (their contents are a previous instruction's);
    /// `put_words` gives them back.
    pub fn take_words(&mut self) -> Box<VectorBuffers> {
        self.effects
            .vectors
            .take()
            .unwrap_or_else(|| Box::new([Words::zeroed(0); 3]))
    }

    pub fn put_words(&mut self, words: Box<VectorBuffers>) {
        self.effects.vectors = Some(words);
    }

    #[inline]
    fn operand(&self, name: Name) -> Result<&'a Resolved, String> {
        // The operands outlive this borrow of `self` (they are the bundle's).
        let operands: &'a Operands = self.operands;
        operands
            .get(name)
            .ok_or_else(|| format!("the instruction has no operand `{}`", name.text()))
    }

    /// An input operand's value (or an implicit register's, by its record
    /// name): a register as read at its use cycle, or an immediate.
    #[inline(always)]
    pub fn read(&mut self, name: Name) -> Result<u32, String> {
        self.read_resolved(self.operand(name)?, name.text())
    }

    #[inline(always)]
    fn read_resolved(&mut self, operand: &Resolved, name: &str) -> Result<u32, String> {
        match operand {
            Resolved::Immediate(v) => Ok(*v),
            &Resolved::Register { run, cycle, bypass } => {
                let at = self.cycle + u64::from(cycle);
                self.note_late_read(run, cycle, at, bypass);
                let (value, early) = self.regs.read_word(run, at, bypass);
                if let Some(write) = early {
                    self.early
                        .push((at, RegisterFile::early(run.leaf as usize, write), self.slot));
                }
                Ok(value)
            }
            _ => Err(not_a_word(operand, name, "read")),
        }
    }

    #[inline(always)]
    pub fn read_implicit(&mut self, record: Name) -> Result<u32, String> {
        self.read(record)
    }

    /// Note a read whose use cycle is after the first: the model reads at
    /// issue, the hardware later (`LateRead`).
    fn note_late_read(&mut self, run: Run, cycle: u32, at: u64, bypass: Bypass) {
        if cycle > 1 {
            self.effects.late_reads.push(LateRead {
                run,
                at,
                bypass,
                reader: self.address,
                slot: self.slot,
            });
        }
    }

    fn queue(&mut self, run: Run, at: u64, bypass: Bypass, value: Bits) {
        self.effects.writes.push(Pending {
            at,
            run,
            value,
            bypass,
            writer: self.address,
            slot: self.slot,
        });
    }

    /// Write an output operand (or an implicit register) at its def cycle.
    #[inline(always)]
    pub fn write(&mut self, name: Name, value: u32) -> Result<(), String> {
        self.write_resolved(self.operand(name)?, name.text(), value)
    }

    #[inline(always)]
    fn write_resolved(&mut self, operand: &Resolved, name: &str, value: u32) -> Result<(), String> {
        match operand {
            &Resolved::Register { run, cycle, bypass } => {
                let at = self.cycle + u64::from(cycle);
                self.queue(run, at, bypass, Bits::Word(value));
                Ok(())
            }
            _ => Err(not_a_word(operand, name, "written")),
        }
    }

    #[inline(always)]
    pub fn write_implicit(&mut self, record: Name, value: u32) -> Result<(), String> {
        self.write(record, value)
    }

    /// A register operand of any width as 32-bit words, lowest first (a
    /// vector's element 0 in the low bits of word 0, as LLVM's
    /// little-endian vector layout puts it), read at its use cycle.
    pub fn read_words(&mut self, name: Name) -> Result<Words, String> {
        let mut out = Words::zeroed(0);
        self.read_words_into(name, &mut out)?;
        Ok(out)
    }

    /// `read_words` into `out` (its words replaced): for the hot vector
    /// instructions, which would otherwise move 256-byte values around.
    #[inline(always)]
    pub fn read_words_into(&mut self, name: Name, out: &mut Words) -> Result<(), String> {
        let (runs, _, cycle, bypass) = self.runs(name)?;
        let at = self.cycle + u64::from(cycle);
        out.clear();
        for &run in runs {
            self.note_late_read(run, cycle, at, bypass);
            if let Some((leaf, write)) = self.regs.read_run(run, at, bypass, out) {
                self.early
                    .push((at, RegisterFile::early(leaf, write), self.slot));
            }
        }
        Ok(())
    }

    /// A register operand's runs of leaves (borrowed from the bundle's
    /// operands), its width in words, its cycle and bypass.
    #[inline(always)]
    fn runs(&self, name: Name) -> Result<(&'a [Run], usize, u32, Bypass), String> {
        match self.operand(name)? {
            Resolved::Register { run, cycle, bypass } => {
                Ok((std::slice::from_ref(run), 1, *cycle, *bypass))
            }
            Resolved::Wide {
                runs,
                words,
                cycle,
                bypass,
            } => Ok((runs, *words, *cycle, *bypass)),
            Resolved::Immediate(_) => Err(format!("operand `{}` is an immediate", name.text())),
            Resolved::Unusable(why) => Err(why.clone()),
        }
    }

    /// Write a register operand of any width from its words, lowest first,
    /// at its def cycle; `words` must be exactly its width.
    #[inline(always)]
    pub fn write_words(&mut self, name: Name, words: &[u32]) -> Result<(), String> {
        let (runs, width, cycle, bypass) = self.runs(name)?;
        if width != words.len() {
            return Err(format!(
                "operand `{}` is {} bits wide, the result {} bits",
                name.text(),
                32 * width,
                32 * words.len()
            ));
        }
        let at = self.cycle + u64::from(cycle);
        let mut rest = words;
        for &run in runs {
            let (these, after) = rest.split_at(usize::from(run.words));
            rest = after;
            let bits = match these {
                [one] => Bits::Word(*one),
                many => {
                    let start = self.effects.words.len() as u32;
                    push_words(&mut self.effects.words, many);
                    Bits::At(start)
                }
            };
            self.queue(run, at, bypass, bits);
        }
        Ok(())
    }

    /// The width of a register operand in 32-bit words.
    pub fn width(&self, name: Name) -> Result<usize, String> {
        match self.operand(name)? {
            Resolved::Register { .. } => Ok(1),
            Resolved::Wide { words, .. } => Ok(*words),
            Resolved::Immediate(_) => Err(format!("operand `{}` is an immediate", name.text())),
            Resolved::Unusable(why) => Err(why.clone()),
        }
    }

    /// Reads and writes back every implicit register the instruction names
    /// without a value the model gives it (e.g. `pe2_ads`, a marker llvm-aie
    /// uses for the partial-word store port): their timing still counts.
    pub fn keep_implicit(&mut self) -> Result<(), String> {
        let operands: &'a Operands = self.operands;
        for &k in &operands.implicit_uses {
            let (record, operand) = &operands.list[k];
            self.read_resolved(operand, record)?;
        }
        for &k in &operands.implicit_defs {
            let (record, operand) = &operands.list[k];
            let &Resolved::Register { run, .. } = operand else {
                return Err(format!("implicit {record} is no register"));
            };
            let value = self.regs.read(run.leaf as usize, u64::MAX, Bypass::NONE).0;
            self.write_resolved(operand, record, value)?;
        }
        Ok(())
    }

    /// The tile and byte offset a data address names, checked for `bytes`
    /// bytes at its natural alignment.
    fn place(&self, address: u32, bytes: u32) -> Result<(Tile, usize), String> {
        if !address.is_multiple_of(bytes) {
            return Err(format!(
                "address {address:#x} is not {bytes}-byte aligned for a {bytes}-byte access"
            ));
        }
        let (side, offset) = view_of(address).ok_or_else(|| {
            format!("address {address:#x} is in none of the core's data views 0x40000-0x7ffff")
        })?;
        let tile = self.views[side as usize]
            .as_ref()
            .map_err(|why| format!("address {address:#x} ({} view): {why}", side.name()))?;
        Ok((*tile, offset as usize))
    }

    /// `bytes` (1, 2 or 4) little-endian bytes at a data address.
    pub fn load(&self, address: u32, bytes: u32) -> Result<u32, String> {
        let (tile, offset) = self.place(address, bytes)?;
        let Some(memory) = self.memories.get(&tile) else {
            return Ok(0); // a tile memory nothing has written yet is zeroed
        };
        let bytes = memory
            .get(offset..offset + bytes as usize)
            .ok_or_else(|| format!("address {address:#x} is outside tile {tile}'s memory"))?;
        Ok(bytes.iter().rev().fold(0u32, |v, &b| v << 8 | u32::from(b)))
    }

    /// `out`'s length of little-endian words at a data address aligned to
    /// their size, into `out` (a vector load).
    pub fn load_words(&self, address: u32, out: &mut Words) -> Result<(), String> {
        let bytes = 4 * out.len();
        let (tile, offset) = self.place(address, bytes as u32)?;
        let Some(memory) = self.memories.get(&tile) else {
            out.fill(0);
            return Ok(());
        };
        let data = memory
            .get(offset..offset + bytes)
            .ok_or_else(|| format!("address {address:#x} is outside tile {tile}'s memory"))?;
        for (word, b) in out.iter_mut().zip(data.chunks_exact(4)) {
            *word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }

    /// Store `data` at a data address aligned to its length.
    pub fn store_bytes(&mut self, address: u32, data: &[u8]) -> Result<(), String> {
        let (tile, offset) = self.place(address, data.len() as u32)?;
        let start = self.effects.stored.len();
        self.effects.stored.extend_from_slice(data);
        let end = self.effects.stored.len();
        self.effects.stores.push((tile, offset, start..end));
        Ok(())
    }

    /// Store `words` little-endian at a data address aligned to their size.
    pub fn store_words(&mut self, address: u32, words: &[u32]) -> Result<(), String> {
        let (tile, offset) = self.place(address, 4 * words.len() as u32)?;
        let start = self.effects.stored.len();
        self.effects
            .stored
            .extend(words.iter().flat_map(|w| w.to_le_bytes()));
        let end = self.effects.stored.len();
        self.effects.stores.push((tile, offset, start..end));
        Ok(())
    }

    pub fn store(&mut self, address: u32, bytes: u32, value: u32) -> Result<(), String> {
        self.store_bytes(address, &value.to_le_bytes()[..bytes as usize])
    }
}
