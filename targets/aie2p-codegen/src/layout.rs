//! The order of the blocks in program memory and how each one leaves:
//! empty blocks that only jump are threaded away, a jump to the next block
//! becomes a fall-through, a branch whose other way is next becomes one
//! `jnz` or `jz` (else `jnz` and a block that jumps), and the start-up
//! block comes first: it sets the stack pointer and falls into the entry.

use crate::error::CodegenError;
use crate::location::SourceLocation;
use crate::regalloc::{Allocated, Exit};
use crate::scheduler::Pending;
use loom_aie2p_isa::{isa, Instruction, Opcode, Value};

pub(crate) enum LaidExit {
    Fallthrough,
    /// `j`, `jnz` or `jz` (by record name) to a block, by layout index.
    Transfer {
        opcode: &'static str,
        condition: Option<String>,
        target: usize,
    },
    Done,
}

pub(crate) struct LaidBlock {
    /// Names this block's address carries in the symbol map.
    pub labels: Vec<String>,
    pub insts: Vec<Pending>,
    pub exit: LaidExit,
    pub exit_location: Option<SourceLocation>,
    /// Some transfer jumps here (it starts a 16-byte line).
    pub target: bool,
}

pub(crate) fn opcode(name: &str) -> Result<&'static Opcode, CodegenError> {
    isa()
        .opcodes
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| CodegenError::Internal(format!("no opcode record {name}")))
}

/// The exit's instruction, its target address `address`.
pub(crate) fn transfer_instruction(
    opcode_name: &str,
    condition: Option<&str>,
    address: u32,
) -> Result<Instruction, CodegenError> {
    let mut operands = Vec::new();
    if let Some(c) = condition {
        operands.push(("s0".to_string(), Value::Register(c.to_string())));
    }
    operands.push(("i".to_string(), Value::Immediate(i64::from(address))));
    Ok(Instruction {
        opcode: opcode(opcode_name)?,
        operands,
    })
}

/// The layout of `allocated` (function `name`), after a start-up block
/// that sets sp to `stack_pointer`.
pub(crate) fn lay_out(
    allocated: Allocated,
    name: &str,
    stack_pointer: u32,
) -> Result<Vec<LaidBlock>, CodegenError> {
    let blocks = allocated.blocks;
    let n = blocks.len();
    // Thread empty jump-only blocks (the entry stays: the start-up falls into it).
    let forward = |mut b: usize| {
        for _ in 0..n {
            match (&blocks[b].exit, blocks[b].insts.is_empty(), b == 0) {
                (Exit::Jump(t), true, false) if *t != b => b = *t,
                _ => break,
            }
        }
        b
    };
    let forwarded: Vec<usize> = (0..n).map(forward).collect();
    let forward = |b: usize| forwarded[b];
    let kept: Vec<usize> = (0..n).filter(|&b| forward(b) == b).collect();
    let labels: Vec<Option<String>> = blocks
        .iter()
        .map(|b| match b.origin {
            Some(id) if id.index() == 0 => Some(name.to_string()),
            Some(id) => Some(format!("{name}.{id}")),
            None => None,
        })
        .collect();
    // Where each kept block lands in the output (the start-up is 0).
    let mut position = vec![usize::MAX; n];
    let mut out_index = 1;
    for (k, &b) in kept.iter().enumerate() {
        position[b] = out_index;
        out_index += 1;
        if let Exit::Branch {
            taken, otherwise, ..
        } = &blocks[b].exit
        {
            let next = kept.get(k + 1).copied();
            let (t, o) = (forward(*taken), forward(*otherwise));
            if next != Some(o) && next != Some(t) {
                out_index += 1;
            }
        }
    }
    let mut laid = vec![LaidBlock {
        labels: vec!["_start".to_string()],
        insts: vec![Pending::fixed((
            Instruction {
                opcode: opcode("MOVXM")?,
                operands: vec![
                    ("dst".into(), Value::Register("sp".into())),
                    ("i".into(), Value::Immediate(i64::from(stack_pointer))),
                ],
            },
            None,
        ))],
        exit: LaidExit::Fallthrough,
        exit_location: None,
        target: false,
    }];
    let mut blocks: Vec<Option<crate::regalloc::AllocatedBlock>> =
        blocks.into_iter().map(Some).collect();
    let mut labels_of: Vec<Vec<String>> = vec![Vec::new(); n];
    for (b, label) in labels.into_iter().enumerate() {
        if let Some(l) = label {
            labels_of[forward(b)].push(l);
        }
    }
    for (k, &b) in kept.iter().enumerate() {
        let next = kept.get(k + 1).copied();
        let block = blocks[b]
            .take()
            .ok_or_else(|| CodegenError::Internal("a block laid out twice".into()))?;
        let mut trailing = None;
        let exit = match &block.exit {
            Exit::Done => LaidExit::Done,
            Exit::Jump(t) => {
                let t = forward(*t);
                if Some(t) == next {
                    LaidExit::Fallthrough
                } else {
                    LaidExit::Transfer {
                        opcode: "J_lng",
                        condition: None,
                        target: position[t],
                    }
                }
            }
            Exit::Branch {
                condition,
                taken,
                otherwise,
            } => {
                let (t, o) = (forward(*taken), forward(*otherwise));
                if Some(o) == next {
                    LaidExit::Transfer {
                        opcode: "JNZ",
                        condition: Some(condition.clone()),
                        target: position[t],
                    }
                } else if Some(t) == next {
                    LaidExit::Transfer {
                        opcode: "JZ",
                        condition: Some(condition.clone()),
                        target: position[o],
                    }
                } else {
                    trailing = Some(position[o]);
                    LaidExit::Transfer {
                        opcode: "JNZ",
                        condition: Some(condition.clone()),
                        target: position[t],
                    }
                }
            }
        };
        laid.push(LaidBlock {
            labels: std::mem::take(&mut labels_of[b]),
            insts: block.insts,
            exit,
            exit_location: block.exit_location.clone(),
            target: false,
        });
        if let Some(target) = trailing {
            laid.push(LaidBlock {
                labels: Vec::new(),
                insts: Vec::new(),
                exit: LaidExit::Transfer {
                    opcode: "J_lng",
                    condition: None,
                    target,
                },
                exit_location: block.exit_location,
                target: false,
            });
        }
    }
    let targets: Vec<usize> = laid
        .iter()
        .filter_map(|b| match b.exit {
            LaidExit::Transfer { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    for t in targets {
        let block = laid
            .get_mut(t)
            .ok_or_else(|| CodegenError::Internal(format!("a jump to missing block {t}")))?;
        block.target = true;
    }
    Ok(laid)
}
