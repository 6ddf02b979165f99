//! The attributes an SPMD strand's instance carries once
//! `loom-expand-instances` made it a strand of its own: set on the strand
//! by the pass, copied onto its worker by the realization, read by the
//! back end's compile report. One spelling for all three.

/// The authored selection: origins, counts and strides, two each.
pub const SELECTION: &str = "loom.selection";

/// The instance's coordinates `[i, j]` within the authored selection (what
/// `pipeline.instance` gave).
pub const INSTANCE: &str = "loom.instance";
