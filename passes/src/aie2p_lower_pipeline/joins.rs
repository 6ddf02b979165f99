//! The copies a DMA-realized strand (the command stream, a forwarding
//! strand) starts, the groups it commits them in and the waits that
//! complete them, followed as its evaluated steps run: every copy must be
//! grouped and waited for, and a wait completes its group and every older
//! one (docs/semantics.md).

use super::realization::{refuse, Refusal};
use loom_dialects::ir::*;
use mlir_sys::*;

pub(super) struct Joins {
    /// Who must join every copy, for the refusals: "the command stream".
    who: &'static str,
    /// Copies not grouped yet: token -> the caller's index of the copy.
    pending: Vec<(MlirValue, usize)>,
    groups: Vec<(MlirValue, Vec<usize>)>,
    completed: Vec<MlirValue>,
}

impl Joins {
    pub(super) fn new(who: &'static str) -> Joins {
        Joins {
            who,
            pending: Vec::new(),
            groups: Vec::new(),
            completed: Vec::new(),
        }
    }

    /// The copy `op` (the caller's copy `index`) starts.
    pub(super) fn copy(&mut self, op: MlirOperation, index: usize) -> Result<(), Refusal> {
        let token = results(op)[0];
        if self.pending.iter().any(|p| same_value(p.0, token)) {
            return refuse(op, format!("the copy's previous run (an earlier pass of the loop) was never grouped; {} must join every transfer", self.who));
        }
        self.pending.push((token, index));
        Ok(())
    }

    /// `kernel.async.group` `op` commits its copies.
    pub(super) fn group(&mut self, op: MlirOperation) -> Result<(), Refusal> {
        let mut members = Vec::new();
        for token in operands(op) {
            match self.pending.iter().position(|p| same_value(p.0, token)) {
                Some(i) => members.push(self.pending.remove(i).1),
                None => {
                    return refuse(
                        op,
                        "the group's tokens must be copies of this strand not grouped before"
                            .into(),
                    )
                }
            }
        }
        self.groups.push((results(op)[0], members));
        Ok(())
    }

    /// The copies `kernel.async.wait` `op` completes: its group's and every
    /// older group's (none when a younger group's wait completed it).
    pub(super) fn wait(&mut self, op: MlirOperation) -> Result<Vec<usize>, Refusal> {
        if int_attribute(op, "newer_groups").unwrap_or(0) != 0 {
            return refuse(
                op,
                format!(
                    "{} waits for whole groups in order (newer_groups = 0)",
                    self.who
                ),
            );
        }
        let group = operands(op)[0];
        let Some(i) = self.groups.iter().rposition(|g| same_value(g.0, group)) else {
            if self.completed.iter().any(|&g| same_value(g, group)) {
                return Ok(Vec::new());
            }
            return refuse(op, "the group is not one of this strand's".into());
        };
        let older: Vec<(MlirValue, Vec<usize>)> = self.groups.drain(..=i).collect();
        self.completed.extend(older.iter().map(|g| g.0));
        Ok(older.into_iter().flat_map(|g| g.1).collect())
    }

    /// Refuses a copy never grouped, once the strand has run (the verifier
    /// refuses a group never waited for).
    pub(super) fn all_grouped(&self) -> Result<(), Refusal> {
        match self.pending.first() {
            Some(&(value, _)) => refuse(
                owner_op(value),
                format!(
                    "the copy is never waited for; {} must join every transfer",
                    self.who
                ),
            ),
            None => Ok(()),
        }
    }
}
