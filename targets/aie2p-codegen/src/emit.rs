//! Emission: each laid-out block scheduled into bundles, jump targets
//! padded to a 16-byte line with NOP bundles, the transfers given their
//! targets' addresses, the bundles packed into their smallest formats and
//! encoded; the symbol map and the line table beside the bytes. The image
//! is then checked by `loom_aie2p_isa::rules::check` and by the latency
//! checker (`hazard`): a violation is an internal compiler error, never an
//! image.

use crate::dead;
use crate::error::CodegenError;
use crate::function::MachineFunction;
use crate::hazard;
use crate::layout::{self, LaidBlock, LaidExit};
use crate::location::SourceLocation;
use crate::regalloc;
use crate::rename;
use crate::scheduler::{self, End, InFlight, Located, Scheduled};
use loom_aie2p_isa::elf::{self, CoreImage};
use loom_aie2p_isa::rules::{self, CheckError, JUMP_ALIGNMENT};
use loom_aie2p_isa::{print_bundle, Bundle, Instruction};
use std::fmt::Write as _;

/// The worker's stack: data-memory addresses `[base, base + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackRegion {
    pub base: u32,
    pub size: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub stack: StackRegion,
    /// Keep only this many registers of each class (tests of spilling).
    pub registers_per_class: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub address: u32,
}

/// The source location of the code from `address` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEntry {
    pub address: u32,
    pub location: SourceLocation,
}

/// A worker's machine code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub bytes: Vec<u8>,
    pub symbols: Vec<Symbol>,
    pub line_table: Vec<LineEntry>,
    /// The start-up's address (program-memory address 0).
    pub entry: u32,
    pub stack_pointer: u32,
    pub frame_bytes: u32,
    pub bundles: usize,
    pub nop_bundles: usize,
}

impl Program {
    /// The same program compiled from the function `from` renamed `to`:
    /// the function's name is only in its block symbols (`from` for its
    /// entry block, `from.N` for the others).
    pub fn renamed(&self, from: &str, to: &str) -> Program {
        let mut program = self.clone();
        for symbol in &mut program.symbols {
            if let Some(rest) = symbol.name.strip_prefix(from) {
                if rest.is_empty() || rest.starts_with('.') {
                    symbol.name = format!("{to}{rest}");
                }
            }
        }
        program
    }
}

fn encode_error(e: loom_aie2p_isa::IsaError) -> CodegenError {
    CodegenError::Encoding(e)
}

fn pack(bundle: &[Located]) -> Result<Bundle, CodegenError> {
    Bundle::pack(bundle.iter().map(|(i, _)| i.clone()).collect()).map_err(encode_error)
}

/// Compile `function` into a worker's machine code.
pub fn compile(function: &MachineFunction, options: &Options) -> Result<Program, CodegenError> {
    let function = &dead::remove_dead_code(function);
    let allocated = regalloc::allocate(function, options.registers_per_class)?;
    let allocated = rename::spread_vectors(allocated, options.registers_per_class)?;
    let stack = options.stack;
    let base = stack.base.div_ceil(64) * 64;
    let stack_pointer = base + allocated.frame_bytes;
    if u64::from(stack_pointer) > u64::from(stack.base) + u64::from(stack.size) {
        return Err(CodegenError::Stack(format!(
            "{} bytes of spill slots (64-byte aligned from {:#x}) exceed the stack region [{:#x}, {:#x})",
            allocated.frame_bytes,
            base,
            stack.base,
            u64::from(stack.base) + u64::from(stack.size)
        )));
    }
    let frame_bytes = allocated.frame_bytes;
    let laid = layout::lay_out(allocated, &function.name, stack_pointer)?;

    // Schedule each block; the transfers' targets are filled in below.
    let scheduled = schedule_blocks(&laid)?;

    // Addresses: a jump target starts a 16-byte line, padded by NOPs.
    let nop = Bundle::pack(vec![]).map_err(encode_error)?;
    let nop_size = nop.encode().map_err(encode_error)?.len() as u32;
    let mut addresses = Vec::new();
    let mut padding = Vec::new();
    let mut at = 0u32;
    for (block, s) in laid.iter().zip(&scheduled) {
        let mut pad = 0;
        while block.target && !at.is_multiple_of(JUMP_ALIGNMENT as u32) {
            at += nop_size;
            pad += 1;
        }
        padding.push(pad);
        addresses.push(at);
        for bundle in &s.bundles {
            at += pack(bundle)?.encode().map_err(encode_error)?.len() as u32;
        }
    }

    let mut bytes = Vec::new();
    let mut symbols = Vec::new();
    let mut line_table: Vec<LineEntry> = Vec::new();
    let mut bundles = 0;
    let mut nop_bundles = 0;
    for (b, (block, mut s)) in laid.iter().zip(scheduled).enumerate() {
        for _ in 0..padding[b] {
            bytes.extend(nop.encode().map_err(encode_error)?);
            bundles += 1;
            nop_bundles += 1;
        }
        if bytes.len() as u32 != addresses[b] {
            return Err(CodegenError::Internal(format!(
                "block {b} laid at {:#x}, emitted at {:#x}",
                addresses[b],
                bytes.len()
            )));
        }
        for name in &block.labels {
            symbols.push(Symbol {
                name: name.clone(),
                address: addresses[b],
            });
        }
        if let (
            Some(t),
            LaidExit::Transfer {
                opcode,
                condition,
                target,
            },
        ) = (s.transfer, &block.exit)
        {
            let filled =
                layout::transfer_instruction(opcode, condition.as_deref(), addresses[*target])?;
            for (inst, _) in s.bundles[t].iter_mut() {
                if inst.opcode.has_delay_slot {
                    *inst = filled.clone();
                }
            }
        }
        for bundle in &s.bundles {
            let address = bytes.len() as u32;
            let packed = pack(bundle)?;
            bytes.extend(packed.encode().map_err(encode_error)?);
            bundles += 1;
            if bundle.is_empty() {
                nop_bundles += 1;
            }
            if let Some(location) = bundle.iter().find_map(|(_, l)| l.clone()) {
                if line_table.last().map(|e| &e.location) != Some(&location) {
                    line_table.push(LineEntry { address, location });
                }
            }
        }
    }
    check(&bytes)?;
    Ok(Program {
        bytes,
        symbols,
        line_table,
        entry: 0,
        stack_pointer,
        frame_bytes,
        bundles,
        nop_bundles,
    })
}

/// The instruction a laid-out block ends with.
fn end_of(block: &LaidBlock) -> Result<End, CodegenError> {
    Ok(match &block.exit {
        LaidExit::Fallthrough => End::Fallthrough,
        LaidExit::Transfer {
            opcode, condition, ..
        } => End::Transfer((
            layout::transfer_instruction(opcode, condition.as_deref(), 0)?,
            block.exit_location.clone(),
        )),
        LaidExit::Done => End::Done((
            Instruction {
                opcode: layout::opcode("DONE")?,
                operands: vec![],
            },
            block.exit_location.clone(),
        )),
    })
}

/// Passes over the blocks before the fallback (each block drained).
/// Every pass that changes something grows some block's entry state in a
/// finite lattice, so the iteration ends; the bound is a safety net.
const PASSES: usize = 16;

/// Passes in which a block's entry state is only what its ways in leave
/// (it may shrink), before the monotone passes.
const SETTLE: usize = 8;

/// Each block scheduled against what its predecessors leave in flight,
/// to a fixed point: every block's entry state covers the exits of all
/// the ways into it (the layout's fall-throughs and transfers), so the
/// schedule holds on every path. Padding NOPs before a jump target only
/// add time on the fall-through path, which is safe.
fn schedule_blocks(laid: &[LaidBlock]) -> Result<Vec<Scheduled>, CodegenError> {
    let n = laid.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, block) in laid.iter().enumerate() {
        let falls = match &block.exit {
            LaidExit::Fallthrough => true,
            LaidExit::Transfer {
                condition, target, ..
            } => {
                if let Some(p) = preds.get_mut(*target) {
                    p.push(b);
                }
                condition.is_some()
            }
            LaidExit::Done => false,
        };
        if falls && b + 1 < n {
            preds[b + 1].push(b);
        }
    }
    // A block entering a loop from before it (a forward edge into a block
    // that a later one jumps back to) drains: the loop's bundles then wait
    // only for what the loop itself leaves in flight, not, every turn, for
    // what was in flight once on the way in. The NOPs that costs are paid
    // once per entry.
    let header: Vec<bool> = (0..n).map(|h| preds[h].iter().any(|&p| p >= h)).collect();
    let mut drains = vec![false; n];
    for (h, ps) in preds.iter().enumerate() {
        for &p in ps {
            if header[h] && p < h {
                drains[p] = true;
            }
        }
    }
    let ends: Vec<End> = laid.iter().map(end_of).collect::<Result<_, _>>()?;
    let mut entries = vec![InFlight::default(); n];
    let mut results: Vec<Option<(Scheduled, InFlight)>> = (0..n).map(|_| None).collect();
    let schedule = |b: usize, entry: &InFlight| {
        scheduler::schedule(laid[b].insts.clone(), ends[b].clone(), entry, drains[b])
    };
    let exits_into = |b: usize, results: &[Option<(Scheduled, InFlight)>]| {
        let mut entry = InFlight::default();
        for &p in &preds[b] {
            if let Some((_, exit)) = &results[p] {
                entry.join(exit);
            }
        }
        entry
    };
    // First each block is scheduled against what its ways in leave now
    // (a loop against its own last schedule), until every schedule covers
    // what its ways in leave: then all hold. Such a state need not be
    // reached (the schedules may alternate), so after SETTLE passes the
    // entry states only grow (joined with the earlier ones), which ends.
    for pass in 0..SETTLE + PASSES {
        let mut changed = false;
        for b in 0..n {
            let mut entry = exits_into(b, &results);
            if pass >= SETTLE {
                entry.join(&entries[b]);
            }
            if results[b].is_none() || !entries[b].covers(&entry) {
                results[b] = Some(schedule(b, &entry)?);
                entries[b] = entry;
                changed = true;
            }
        }
        if !changed {
            return Ok(results.into_iter().flatten().map(|(s, _)| s).collect());
        }
    }
    // No fixed point: every block drains, so nothing crosses a boundary.
    laid.iter()
        .zip(ends)
        .map(|(block, end)| {
            scheduler::schedule(block.insts.clone(), end, &InFlight::default(), true)
                .map(|(s, _)| s)
        })
        .collect()
}

/// The checks every emitted image passes: the silicon rules and latency.
pub(crate) fn check(bytes: &[u8]) -> Result<(), CodegenError> {
    rules::check(bytes, 0).map_err(|e| match e {
        CheckError::Rule(v) => CodegenError::Rule(v),
        CheckError::Decode(e) => CodegenError::Encoding(e),
    })?;
    hazard::check(bytes, 0).map_err(|e| match e {
        hazard::CheckError::Hazard(h) => CodegenError::Hazard(h),
        hazard::CheckError::Decode(e) => CodegenError::Encoding(e),
        hazard::CheckError::Untimed(u) => CodegenError::Untimed(u),
        hazard::CheckError::Unsupported(m) => CodegenError::Internal(m),
    })
}

impl Program {
    /// What the core ELF loads: the program at program-memory address 0.
    pub fn core_image(&self) -> CoreImage {
        CoreImage {
            program: self.bytes.clone(),
            data: vec![],
            entry: self.entry,
        }
    }

    /// The core ELF, with the line table in `.loom.lines`.
    pub fn elf(&self) -> Result<Vec<u8>, CodegenError> {
        let lines: Vec<elf::LineRecord> = self
            .line_table
            .iter()
            .map(|l| elf::LineRecord {
                address: l.address,
                location: format!(
                    "{}:{}:{}",
                    l.location.file, l.location.line, l.location.column
                ),
            })
            .collect();
        elf::write_with_lines(&self.core_image(), &lines)
            .map_err(|e| CodegenError::Elf(e.to_string()))
    }

    /// The bundles of the block whose symbol is `label` (none when no
    /// symbol is): from its address to the next symbol's, but not the
    /// NOP bundles after its transfer's delay slots, which align the next
    /// block and run only on the way into it.
    pub fn block(&self, label: &str) -> Result<Option<Vec<Bundle>>, CodegenError> {
        let Some(start) = self.symbols.iter().find(|s| s.name == label) else {
            return Ok(None);
        };
        let start = start.address as usize;
        let end = self
            .symbols
            .iter()
            .map(|s| s.address as usize)
            .filter(|&a| a > start)
            .min()
            .unwrap_or(self.bytes.len());
        let bytes = self
            .bytes
            .get(start..end)
            .ok_or_else(|| CodegenError::Internal(format!("{label} lies outside the image")))?;
        let mut bundles: Vec<Bundle> = loom_aie2p_isa::decode(bytes)
            .map_err(encode_error)?
            .into_iter()
            .map(|(_, b)| b)
            .collect();
        let transfer = bundles
            .iter()
            .position(|b| b.instructions.iter().any(|i| i.opcode.has_delay_slot));
        if let Some(t) = transfer {
            bundles.truncate(t + 1 + rules::DELAY_SLOTS);
        }
        Ok(Some(bundles))
    }

    /// The disassembly, one bundle a line with its address, labels above.
    pub fn disassembly(&self) -> Result<String, CodegenError> {
        let mut out = String::new();
        for (offset, bundle) in loom_aie2p_isa::decode(&self.bytes).map_err(encode_error)? {
            for s in self.symbols.iter().filter(|s| s.address as usize == offset) {
                let _ = writeln!(out, "{}:", s.name);
            }
            let _ = writeln!(out, "{offset:4x}: {}", print_bundle(&bundle));
        }
        Ok(out)
    }
}
