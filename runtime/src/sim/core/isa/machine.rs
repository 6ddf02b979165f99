//! One AIE2P core executing its program: a bundle per cycle at the PC;
//! every slot reads its operands before any of the bundle's effects land;
//! control transfers take effect after 5 delay slots (llvm-aie
//! AIEBaseInstrInfo NumDelaySlots); a lock acquire that cannot be granted
//! stalls the core (no slot of its bundle executes) until it can, and the
//! stall counts cycles.

use super::bundle::{self, Decoded};
use super::checks;
use super::exec::{Effects, Exec, LateRead, LockRequest};
use super::neighbours::{views, Views};
use super::registers::{leaf_bit, Early, Pending, RegisterFile};
use super::structural::Scoreboard;
use super::timing::visible;
use crate::sim::array::Array;
use crate::sim::core::LockStall;
use loom_targets::{DeviceProfile, Tile};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Where a core's program comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramSource {
    /// The program memory the artifact's control code wrote (BLOCKWRITEs
    /// at 0x20000 during bring-up): the bytes silicon would run. A core
    /// enabled before its program was written is an error.
    ControlCode,
    /// The tile image's PT_LOAD, as a loader would copy it: for tests that
    /// run cores without control code.
    TileImage,
}

/// A read before its write landed: the read's cycle, the write, and the
/// reading instruction's slot.
type EarlyRead = (u64, Early, usize);

/// Bundles between a control transfer and its effect.
pub const DELAY_SLOTS: u32 = 5;

/// How cores run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A core that runs more cycles than this ends the run (a runaway).
    pub max_cycles: u64,
    /// Where a core's program comes from.
    pub program: ProgramSource,
    /// Report reads before their write lands, two writes landing in one
    /// cycle, and the silicon rules (docs/aie2p-isa.md) broken at run time.
    pub hazards: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            // Far above any test program (they run thousands of cycles).
            max_cycles: 100_000_000,
            program: ProgramSource::ControlCode,
            hazards: true,
        }
    }
}

/// Where a core failed and why (the message names the core, the bundle
/// and the instruction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub address: u32,
    pub message: String,
}

#[derive(Debug, Clone)]
pub enum Status {
    Running,
    /// Blocked on an acquire since the cycle it was issued at.
    Waiting {
        request: LockRequest,
        text: String,
    },
    Done,
}

/// A control transfer waiting out its delay slots.
#[derive(Debug, Clone, Copy)]
pub(super) struct Branch {
    pub(super) target: Option<u32>,
    pub(super) left: u32,
    pub(super) from: u32,
}

pub struct Core {
    pub tile: Tile,
    pub image: String,
    profile: &'static DeviceProfile,
    /// The tiles its data views reach.
    views: Views,
    program: Vec<u8>,
    /// Decoded bundles by address.
    decoded: Vec<Option<Rc<Decoded>>>,
    pub pc: u32,
    pub regs: RegisterFile,
    pub cycle: u64,
    pub started: u64,
    pub bundles: u64,
    pub events: u64,
    pub(super) branch: Option<Branch>,
    /// The bundle count at the last lock request.
    pub(super) last_lock: Option<u64>,
    /// Reads of earlier bundles still to happen (use cycle > 1).
    late_reads: Vec<LateRead>,
    /// The functional units held in the cycles ahead.
    units: Scoreboard,
    /// Scratch buffers of `execute`, kept to reuse their allocations; boxed
    /// so that a bundle takes and puts back a pointer, not the buffers.
    scratch: Option<Box<Scratch>>,
    pub status: Status,
    /// Cycles stalled, per lock (its name).
    pub stalls: BTreeMap<String, u64>,
    /// Cycles stalled, per address of the waiting acquire (the line table
    /// names its source line, and so its channel).
    pub stall_sites: BTreeMap<u32, u64>,
    /// Bundles issued with an instruction in the vector slot (the vector
    /// unit's use: `vmac.f`, `vadd.f`, `vconv`, ...).
    pub vector_bundles: u64,
    /// Each lock wait, oldest first, when a trace asked for them.
    pub stall_log: Option<Vec<LockStall>>,
    /// Whether its program came from the control code's writes yet.
    pub program_taken: bool,
}

/// What executing a bundle fills: its effects and its reads that came too
/// early.
#[derive(Default)]
struct Scratch {
    effects: Effects,
    early: Vec<EarlyRead>,
}

/// The name reports give a core lock.
pub fn lock_name(request: &LockRequest) -> String {
    format!(
        "lock {} of tile {} (core lock id {})",
        request.lock, request.tile, request.id
    )
}

impl Core {
    pub fn new(
        profile: &'static DeviceProfile,
        tile: Tile,
        image: &str,
        program: Vec<u8>,
        entry: u32,
        at: u64,
    ) -> Core {
        Core {
            tile,
            image: image.to_string(),
            profile,
            views: views(profile, tile),
            decoded: vec![None; program.len()],
            program,
            pc: entry,
            regs: RegisterFile::new(),
            cycle: at,
            started: at,
            bundles: 0,
            events: 0,
            branch: None,
            last_lock: None,
            late_reads: Vec::new(),
            units: Scoreboard::default(),
            scratch: None,
            status: Status::Running,
            stalls: BTreeMap::new(),
            stall_sites: BTreeMap::new(),
            vector_bundles: 0,
            stall_log: None,
            program_taken: false,
        }
    }

    #[cold]
    pub(super) fn fault(&self, address: u32, bundle: Option<&str>, message: String) -> Fault {
        let bundle = bundle.map_or(String::new(), |b| format!(" `{b}`"));
        Fault {
            address,
            message: format!(
                "core {} (tile image `{}`) at {address:#06x}{bundle}: {message}",
                self.tile, self.image
            ),
        }
    }

    /// The text of the instruction that made `write`.
    pub(super) fn writer_text(&self, write: &Pending) -> String {
        self.decoded
            .get(write.writer as usize)
            .and_then(|d| d.as_ref()?.slots.get(write.slot))
            .map_or_else(|| "?".into(), |s| s.text.clone())
    }

    pub(super) fn decode(&mut self, address: u32) -> Result<Rc<Decoded>, Fault> {
        match self.decoded.get(address as usize) {
            Some(Some(d)) => Ok(d.clone()),
            _ => self.decode_first(address),
        }
    }

    /// The first decode at `address` (out of line: every later one finds
    /// it decoded).
    #[inline(never)]
    fn decode_first(&mut self, address: u32) -> Result<Rc<Decoded>, Fault> {
        let bytes = self.program.get(address as usize..).unwrap_or(&[]);
        if bytes.is_empty() {
            return Err(self.fault(
                address,
                None,
                format!(
                    "the PC is past the end of program memory ({} bytes)",
                    self.program.len()
                ),
            ));
        }
        let decoded =
            Rc::new(bundle::decode(bytes, address).map_err(|why| self.fault(address, None, why))?);
        self.decoded[address as usize] = Some(decoded.clone());
        Ok(decoded)
    }

    /// The address after the delay slots of a transfer at `address`.
    fn after_delay_slots(&mut self, address: u32, size: u32) -> Result<u32, String> {
        let mut at = address + size;
        for _ in 0..DELAY_SLOTS {
            at += self.decode(at).map_err(|f| f.message)?.size;
        }
        Ok(at)
    }

    /// Run until the core blocks, finishes or fails; whether it issued a
    /// bundle.
    pub fn run(
        &mut self,
        array: &mut Array,
        memories: &mut BTreeMap<Tile, Vec<u8>>,
        options: &Options,
    ) -> Result<bool, Fault> {
        let mut ran = false;
        while !matches!(self.status, Status::Done) {
            if self.cycle - self.started > options.max_cycles {
                return Err(self.fault(
                    self.pc,
                    None,
                    format!(
                        "runaway: the core ran past the limit of {} cycles (now at cycle {}, \
                         {} bundles issued) without finishing",
                        options.max_cycles, self.cycle, self.bundles
                    ),
                ));
            }
            if !self.step(array, memories, options)? {
                return Ok(ran);
            }
            ran = true;
        }
        Ok(ran)
    }

    /// Run `program` (the control code's program memory) instead of the
    /// tile image's.
    pub fn set_program(&mut self, program: Vec<u8>) {
        self.decoded = vec![None; program.len()];
        self.program = program;
    }

    /// Execute every slot of `decoded` at the current cycle into `effects`
    /// and `early_all` (the reads that came too early), both cleared first:
    /// the core's own buffers, reused so a bundle allocates nothing.
    fn execute(
        &self,
        decoded: &Decoded,
        memories: &BTreeMap<Tile, Vec<u8>>,
        after: &Result<u32, String>,
        effects: &mut Effects,
        early_all: &mut Vec<EarlyRead>,
    ) -> Result<(), Fault> {
        effects.clear();
        early_all.clear();
        let Some(first) = decoded.slots.first() else {
            return Ok(());
        };
        // One `Exec` for the bundle, its slot and operands set per slot.
        let mut x = Exec {
            profile: self.profile,
            tile: self.tile,
            views: &self.views,
            regs: &self.regs,
            memories,
            cycle: self.cycle,
            address: self.pc,
            slot: 0,
            operands: &first.operands,
            after_delay_slots: after,
            effects,
            early: early_all,
        };
        for (index, slot) in decoded.slots.iter().enumerate() {
            let (Some(semantics), Some(_)) = (slot.semantics, slot.itinerary) else {
                continue; // refused before
            };
            x.slot = index;
            x.operands = &slot.operands;
            semantics(&mut x).map_err(|why| {
                self.fault(
                    self.pc,
                    Some(&decoded.text),
                    format!("`{}`: {why}", slot.text),
                )
            })?;
        }
        Ok(())
    }

    /// Issue the bundle at the PC: whether it issued (false: blocked on a
    /// lock).
    fn step(
        &mut self,
        array: &mut Array,
        memories: &mut BTreeMap<Tile, Vec<u8>>,
        options: &Options,
    ) -> Result<bool, Fault> {
        let pc = self.pc;
        // A NOP bundle decoded before issues without its `Rc` cloned.
        if let Some(Some(d)) = self.decoded.get(pc as usize) {
            if d.nops_only {
                let size = d.size;
                return self.issue_nops(size, options);
            }
        }
        let decoded = self.decode(pc)?;
        if decoded.nops_only {
            return self.issue_nops(decoded.size, options);
        }
        self.regs.settle(self.cycle);
        let fail = |core: &Core, why: String| core.fault(pc, Some(&decoded.text), why);
        if let Err(why) = &decoded.modelled {
            return Err(fail(self, why.clone()));
        }
        let branch = self.branch.map(|b| (b.from, DELAY_SLOTS - b.left + 1));
        checks::delay_slots(&decoded.delay_slot_offences, branch, options.hazards)
            .map_err(|why| fail(self, why))?;
        let none = Err(String::new()); // no control transfer, no return address
        let after = if decoded.transfers {
            if decoded.after_delay_slots.get().is_none() {
                let after = self.after_delay_slots(pc, decoded.size);
                decoded.after_delay_slots.get_or_init(|| after);
            }
            decoded.after_delay_slots.get().unwrap_or(&none)
        } else {
            &none
        };
        let mut scratch = self.scratch.take().unwrap_or_default();
        let Scratch { effects, early } = &mut *scratch;
        self.execute(&decoded, memories, after, effects, early)?;
        if let Some(request) = effects.lock.clone() {
            let apart = self.last_lock.map(|last| self.bundles - last);
            checks::lock_spacing(apart, options.hazards).map_err(|why| fail(self, why))?;
            if request.acquire {
                let granted = self
                    .acquire(array, &request)
                    .map_err(|why| self.fault(pc, Some(&decoded.text), why))?;
                let Some(at) = granted else {
                    self.status = Status::Waiting {
                        request,
                        text: decoded.text.clone(),
                    };
                    self.scratch = Some(scratch);
                    return Ok(false);
                };
                self.status = Status::Running;
                if at > self.cycle {
                    *self.stalls.entry(lock_name(&request)).or_insert(0) += at - self.cycle;
                    *self.stall_sites.entry(pc).or_insert(0) += at - self.cycle;
                    if let Some(log) = &mut self.stall_log {
                        log.push(LockStall {
                            tile: request.tile,
                            lock: request.lock,
                            value: request.value.unsigned_abs(),
                            begin: self.cycle,
                            end: at,
                        });
                    }
                    self.cycle = at;
                    // The bundle issues once the lock is granted: its reads
                    // and writes count from then.
                    self.regs.settle(self.cycle);
                    self.execute(&decoded, memories, after, effects, early)?;
                }
            }
            self.last_lock = Some(self.bundles);
        }
        if options.hazards {
            if let Some((at, e, slot)) = early.first() {
                let reader = &decoded.slots[*slot].text;
                let why = checks::early_read(reader, *at, e, &self.writer_text(&e.write));
                return Err(fail(self, why));
            }
        }
        self.commit(array, memories, &decoded, effects, options)?;
        self.scratch = Some(scratch);
        Ok(true)
    }

    /// Issue the NOP bundle of `size` bytes at the PC. NOPs read, write,
    /// hold and check nothing: the bundle only issues. (The writes landing
    /// meanwhile the next bundle with slots settles, before it reads, and
    /// the late reads it would drop as past, that bundle drops.)
    #[inline]
    fn issue_nops(&mut self, size: u32, options: &Options) -> Result<bool, Fault> {
        self.bundles += 1;
        self.cycle += 1;
        self.advance(self.pc + size, None, options).map(|()| true)
    }

    /// The bundle's functional units, issued at the current cycle, or the
    /// first one another instruction holds then.
    fn take_units(&mut self, decoded: &Decoded) -> Result<(), String> {
        if let Some(merged) = &decoded.holds {
            if self.units.take(self.cycle, merged, self.pc) {
                return Ok(());
            }
        }
        self.take_slots(decoded)
    }

    /// `take_units` slot by slot, to name the first conflict (out of line:
    /// a bundle whose merged holds meet none is taken at once).
    #[cold]
    #[inline(never)]
    fn take_slots(&mut self, decoded: &Decoded) -> Result<(), String> {
        let holds = decoded
            .slots
            .iter()
            .map(|s| s.holds.as_deref().map_err(Clone::clone));
        let c = match self.units.take_slots(self.cycle, holds, self.pc) {
            Ok(()) => return Ok(()),
            Err(Err(why)) => return Err(why),
            Err(Ok(c)) => c,
        };
        let slot_text = |pc: u32, k: usize| {
            self.decoded
                .get(pc as usize)
                .and_then(|d| d.as_ref()?.slots.get(k))
                .map(|s| s.text.clone())
        };
        // The holder: a slot of this bundle, else the latest bundle issued
        // before it with a slot holding the unit then (the last of them).
        let holder = c.own.map(|k| (self.pc, k)).or_else(|| {
            Scoreboard::issue_cycles(c.at, self.cycle).find_map(|issue| {
                let pc = self.units.issued(issue)?;
                let slots = &self.decoded.get(pc as usize)?.as_ref()?.slots;
                let k = slots.iter().rposition(|s| {
                    s.holds
                        .as_ref()
                        .is_ok_and(|h| h.iter().any(|h| h.holds(c.at - issue, c.bit)))
                })?;
                Some((pc, k))
            })
        });
        let (other, other_at) = holder
            .and_then(|(pc, k)| Some((slot_text(pc, k)?, pc)))
            .unwrap_or_else(|| ("?".into(), 0));
        let text = &decoded.slots[c.slot].text;
        Err(checks::structural(text, c.unit, c.at, &other, other_at))
    }

    fn acquire(&self, array: &mut Array, r: &LockRequest) -> Result<Option<u64>, String> {
        let result = if r.value < 0 {
            array.try_acquire(r.tile, r.lock, r.value.unsigned_abs(), self.cycle)
        } else {
            array.try_acquire_equal(r.tile, r.lock, r.value as u32, self.cycle)
        };
        result.map_err(|e| format!("acquire of {}: {e}", lock_name(r)))
    }

    /// The loop-register and same-cycle checks of write `k` of `writes`,
    /// leaf by leaf (`earlier`: an earlier write of the bundle may share a
    /// leaf).
    #[inline]
    fn check_leaves(
        &self,
        writes: &[Pending],
        k: usize,
        earlier: bool,
        decoded: &Decoded,
    ) -> Result<(), Fault> {
        let (write, pc) = (&writes[k], self.pc);
        for leaf in write.run.leaves() {
            if decoded.names_loop_register {
                checks::loop_register(leaf, || self.writer_text(write))
                    .map_err(|why| self.fault(pc, Some(&decoded.text), why))?;
            }
            let twin = self.regs.same_cycle(leaf, write.at).or_else(|| {
                let same = |w: &&Pending| w.run.has(leaf) && w.at == write.at;
                earlier.then(|| writes[..k].iter().find(same)).flatten()
            });
            if let Some(other) = twin {
                let why = checks::same_cycle(
                    &self.writer_text(write),
                    leaf,
                    write,
                    &self.writer_text(other),
                    other,
                );
                return Err(self.fault(pc, Some(&decoded.text), why));
            }
        }
        Ok(())
    }

    fn commit(
        &mut self,
        array: &mut Array,
        memories: &mut BTreeMap<Tile, Vec<u8>>,
        decoded: &Decoded,
        effects: &mut Effects,
        options: &Options,
    ) -> Result<(), Fault> {
        let pc = self.pc;
        let pc_cycle = self.cycle;
        // The leaves of the bundle's writes so far, as `leaf_bit`s: most
        // writes share no leaf with an earlier one and search nothing.
        let mut written = 0;
        for (k, write) in effects.writes.iter().enumerate() {
            if !options.hazards {
                continue; // (the loop registers are checked with the hazards)
            }
            let bits = write.run.bits();
            let earlier = written & bits != 0;
            written |= bits;
            // Leaf by leaf only where a check could fail: a loop register
            // named, an earlier write of the bundle to a leaf with the same
            // bit, or a write in flight to one of its leaves.
            if decoded.names_loop_register || earlier || self.regs.any_in_flight(write.run) {
                self.check_leaves(&effects.writes, k, earlier, decoded)?;
            }
        }
        // After the register checks, so two writes of one register landing
        // in one cycle are named as such rather than by their write port.
        if options.hazards {
            self.take_units(decoded)
                .map_err(|why| self.fault(pc, Some(&decoded.text), why))?;
        }
        // The model reads every operand at issue: a write landing before a
        // late read of this or an earlier bundle would reach that read on
        // the hardware.
        self.late_reads.retain(|r| r.at > pc_cycle);
        self.late_reads.append(&mut effects.late_reads);
        // The late reads' leaves, as `leaf_bit`s, and the last of their
        // cycles: a write to none of them, or landing after them all (no
        // read before a write sees it), searches nothing.
        let (late, last) = self.late_reads.iter().fold((0, 0), |(bits, last), r| {
            (bits | r.run.bits(), last.max(r.at))
        });
        let searched = |w: &&Pending| w.at <= last && late & w.run.bits() != 0;
        for write in effects.writes.iter().filter(searched) {
            for leaf in write.run.leaves().filter(|&l| late & leaf_bit(l) != 0) {
                let overtaken = self
                    .late_reads
                    .iter()
                    .find(|r| r.run.has(leaf) && visible(write.at, write.bypass, r.at, r.bypass));
                if let Some(read) = overtaken {
                    let reader = self
                        .decoded
                        .get(read.reader as usize)
                        .and_then(|d| d.as_ref()?.slots.get(read.slot))
                        .map_or_else(|| "?".into(), |s| s.text.clone());
                    let why = checks::overtaken(
                        &self.writer_text(write),
                        leaf,
                        write,
                        &reader,
                        read.reader,
                        read.at,
                    );
                    return Err(self.fault(pc, Some(&decoded.text), why));
                }
            }
        }
        for write in &effects.writes {
            self.regs.write(write, &effects.words);
        }
        for (tile, offset, range) in effects.stores.drain(..) {
            let bytes = &effects.stored[range];
            let memory = memories.entry(tile).or_insert_with(|| {
                vec![0; crate::sim::memory::tile_memory_bytes(self.profile, tile) as usize]
            });
            let Some(window) = memory.get_mut(offset..offset + bytes.len()) else {
                return Err(self.fault(
                    pc,
                    Some(&decoded.text),
                    format!("a store to byte {offset:#x} is outside tile {tile}'s memory"),
                ));
            };
            window.copy_from_slice(bytes);
        }
        if let Some(r) = effects.lock.take().filter(|r| !r.acquire) {
            let value = u32::try_from(r.value).map_err(|_| {
                self.fault(
                    pc,
                    Some(&decoded.text),
                    format!(
                        "release of {} by {}: a release adds a value >= 0",
                        lock_name(&r),
                        r.value
                    ),
                )
            })?;
            array
                .release(r.tile, r.lock, value, self.cycle)
                .map_err(|e| {
                    self.fault(
                        pc,
                        Some(&decoded.text),
                        format!("release of {}: {e}", lock_name(&r)),
                    )
                })?;
        }
        self.events += effects.events;
        self.bundles += 1;
        self.vector_bundles += u64::from(decoded.vector);
        self.cycle += 1;
        if effects.done {
            self.status = Status::Done;
            return Ok(());
        }
        self.advance(pc + decoded.size, effects.transfer, options)
    }

    /// Move the PC past the bundle just issued at it (`next` follows it):
    /// start the delay slots of its control transfer, if any, or count down
    /// those of an earlier one and take its jump after the last.
    fn advance(
        &mut self,
        next: u32,
        transfer: Option<Option<u32>>,
        options: &Options,
    ) -> Result<(), Fault> {
        let pc = self.pc;
        if let Some(target) = transfer {
            self.branch = Some(Branch {
                target,
                left: DELAY_SLOTS,
                from: pc,
            });
            self.pc = next;
            return Ok(());
        }
        self.pc = next;
        if let Some(mut branch) = self.branch.take() {
            branch.left -= 1;
            if branch.left > 0 {
                self.branch = Some(branch);
            } else if let Some(target) = branch.target {
                return self.jump(branch.from, target, options);
            }
        }
        Ok(())
    }

    /// Take the jump of the transfer at `from` (its delay slots done); out
    /// of line, as one bundle in several takes it.
    #[inline(never)]
    fn jump(&mut self, from: u32, target: u32, options: &Options) -> Result<(), Fault> {
        if options.hazards {
            let mut decode = |at| self.decode(at).map_err(|f| f.message);
            if let Err(why) = checks::jump_target(target, &mut decode) {
                let text = self.decode(from).ok().map(|d| d.text.clone());
                return Err(self.fault(from, text.as_deref(), why));
            }
        }
        self.pc = target;
        Ok(())
    }
}
