//! The compile pipeline `loom-compile` runs: which passes, in which order,
//! with which options, and the record of running them (IR trace, timings,
//! op counts) that the trace index and the compile report are made from.
//!
//! From authored source to the outlined module:
//! 1. `loom-specialize-config{values=...}`: `--config` values become constants;
//! 2. `loom-inline`: `func.def inline` helpers disappear into their callers;
//! 3. `loom-select-root{root=...}`: the `--root` pipeline and what it reaches;
//! 4. `loom-expand-instances`: a strand selecting several workers becomes one
//!    strand per worker, `pipeline.instance` its coordinates (SPMD);
//! 5. `loom-canonicalize`: folding, single-trip loops, dead code;
//! 6. `loom-cse`: identical pure ops merged, per strand and function;
//! 7. `loom-structured-to-cfg`: loops to blocks, with `index.assume` facts;
//! 8. `loom-resolve-target{target=...}`: target contexts with device profiles;
//! 9. `outline-pipeline-strands`: strand bodies become functions;
//! 10. `loom-check-progress`: every schedule of the strands completes, or the
//!     compile is refused with the deadlock (before any realization, so no
//!     realization can hide one);
//! 11. `aie2p-lower-pipeline`: the native realization (worker functions and
//!     the configuration function), when compiling for a target.
//!
//! A module that is already outlined (every strand body is one call) resumes
//! at step 10; a native realization (no pipeline left) after step 11.

use crate::session::{PipelineOptions, Session};
use crate::Failure;
use loom_dialects::ir;
use loom_dialects::names;
use melior::ir::Module;
use std::collections::BTreeMap;
use std::time::Instant;

/// One pass of the pipeline: its name and its option text.
#[derive(Clone, Debug)]
pub struct Step {
    pub pass: &'static str,
    pub options: String,
}

impl Step {
    fn pipeline_text(&self) -> String {
        if self.options.is_empty() {
            format!("builtin.module({})", self.pass)
        } else {
            format!("builtin.module({}{{{}}})", self.pass, self.options)
        }
    }
}

/// What the pipeline is asked to do.
pub struct Request<'a> {
    pub root: &'a str,
    pub target: Option<&'a str>,
    pub config: &'a [(String, String)],
    /// Whether to realize the pipeline on its target (aie2p-lower-pipeline).
    pub lower: bool,
}

/// Every pass the pipeline can run, in order (for `--dump-ir-after`).
pub const PASSES: &[&str] = &[
    "loom-specialize-config",
    "loom-inline",
    "loom-select-root",
    "loom-expand-instances",
    "loom-canonicalize",
    "loom-cse",
    "loom-structured-to-cfg",
    "loom-resolve-target",
    "outline-pipeline-strands",
    "loom-check-progress",
    "aie2p-lower-pipeline",
];

/// Whether the module's strands are already outlined: each body is one call.
fn is_outlined(module: &Module) -> bool {
    let strands: Vec<_> = ir::walk(module.as_operation().to_raw())
        .into_iter()
        .filter(|&op| ir::op_name(op) == names::pipeline::STRAND)
        .collect();
    !strands.is_empty() && strands.into_iter().all(loom_passes::is_outlined)
}

/// Whether the module is a native realization: no pipeline left, and a
/// function targeting a configuration context.
pub fn is_native(module: &Module) -> bool {
    let top = ir::top_level_ops(module.as_operation().to_raw());
    let configurations: Vec<String> = top
        .iter()
        .filter(|&&op| {
            ir::op_name(op) == names::aie2p::TARGET
                && ir::string_attribute(op, "kind").as_deref() == Some("configuration")
        })
        .filter_map(|&op| ir::symbol_name(op))
        .collect();
    !top.iter()
        .any(|&op| ir::op_name(op) == names::pipeline::DEF)
        && top.iter().any(|&op| {
            ir::op_name(op) == names::func::DEF
                && ir::symbol_ref(op, "target").is_some_and(|t| configurations.contains(&t))
        })
}

/// Where a module stands in the pipeline: authored source (or anything
/// before outlining), outlined, or a native realization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Source,
    Outlined,
    Native,
}

impl Stage {
    pub fn of(module: &Module) -> Stage {
        if is_native(module) {
            Stage::Native
        } else if is_outlined(module) {
            Stage::Outlined
        } else {
            Stage::Source
        }
    }
}

/// Whether `name` can stand in a pass option unquoted: a symbol name of
/// letters, digits and `_ . $ -` (no `,`, `=`, `}` or space that would end
/// or split the option).
fn is_symbol_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'))
}

/// The names `config.def` declares in `module`.
fn declared_config(module: &Module) -> Vec<String> {
    ir::walk(module.as_operation().to_raw())
        .into_iter()
        .filter(|&op| ir::op_name(op) == names::config::DEF)
        .filter_map(ir::symbol_name)
        .collect()
}

/// Refuses a request the module cannot take: a root or a `--config` that
/// would not stand in the pipeline's options as written, a value that is not
/// an integer, or a name no `config.def` declares. (A resumed module is
/// specialized already; its `config.def`s are not asked.)
fn check(request: &Request, module: &Module, resumed: bool) -> Result<(), String> {
    let root = request.root.trim_start_matches('@');
    if !is_symbol_name(root) {
        return Err(format!("--root=@{root}: not a symbol name"));
    }
    let declared = declared_config(module);
    for (name, value) in request.config {
        let flag = format!("--config={name}={value}");
        if !is_symbol_name(name) {
            return Err(format!("{flag}: `{name}` is not a symbol name"));
        }
        if value.parse::<i64>().is_err() {
            return Err(format!(
                "{flag}: the value `{value}` is not a 64-bit integer"
            ));
        }
        if !resumed && !declared.contains(name) {
            let known: Vec<String> = declared.iter().map(|d| format!("@{d}")).collect();
            return Err(format!(
                "{flag}: no config.def declares @{name}; declared: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
    }
    Ok(())
}

/// The steps for `request`, starting at `stage` (where `module` stands,
/// `Stage::of`), or why the request cannot run on it.
pub fn plan(request: &Request, module: &Module, stage: Stage) -> Result<Vec<Step>, String> {
    let lower = Step {
        pass: "aie2p-lower-pipeline",
        options: String::new(),
    };
    let progress = Step {
        pass: "loom-check-progress",
        options: String::new(),
    };
    check(request, module, stage != Stage::Source)?;
    match stage {
        Stage::Native => return Ok(Vec::new()),
        Stage::Outlined => {
            return Ok(if request.lower {
                vec![progress, lower]
            } else {
                vec![progress]
            })
        }
        Stage::Source => {}
    }
    let values: Vec<String> = request
        .config
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let mut steps = vec![
        Step {
            pass: "loom-specialize-config",
            options: if values.is_empty() {
                String::new()
            } else {
                format!("values={}", values.join(","))
            },
        },
        Step {
            pass: "loom-inline",
            options: String::new(),
        },
        Step {
            pass: "loom-select-root",
            options: format!("root={}", request.root.trim_start_matches('@')),
        },
        Step {
            pass: "loom-expand-instances",
            options: String::new(),
        },
        Step {
            pass: "loom-canonicalize",
            options: String::new(),
        },
        Step {
            pass: "loom-cse",
            options: String::new(),
        },
        Step {
            pass: "loom-structured-to-cfg",
            options: String::new(),
        },
    ];
    if let Some(target) = request.target {
        steps.push(Step {
            pass: "loom-resolve-target",
            options: format!("target={target}"),
        });
    }
    steps.push(Step {
        pass: "outline-pipeline-strands",
        options: String::new(),
    });
    steps.push(progress);
    if request.lower {
        steps.push(lower);
    }
    Ok(steps)
}

/// What running one step recorded.
pub struct Record {
    pub pass: &'static str,
    pub options: String,
    pub seconds: f64,
    pub ops: BTreeMap<String, usize>,
}

/// Ops in the module by name.
pub fn op_counts(module: &Module) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for op in ir::walk(module.as_operation().to_raw()).into_iter().skip(1) {
        *counts.entry(ir::op_name(op)).or_insert(0) += 1;
    }
    counts
}

/// Run `steps` one by one, verifying after each; `after` sees the module
/// after every step (for IR dumps).
pub fn run(
    session: &Session,
    module: &mut Module,
    steps: &[Step],
    after: &mut dyn FnMut(&Step, &Module) -> Result<(), Failure>,
) -> Result<Vec<Record>, Failure> {
    let options = PipelineOptions::default();
    let mut records = Vec::new();
    for step in steps {
        let start = Instant::now();
        session.run_pipeline(module, &step.pipeline_text(), &options, &mut |_| {})?;
        let seconds = start.elapsed().as_secs_f64();
        if step.pass == "loom-select-root" {
            unbound_config(session, module)?;
        }
        after(step, module)?;
        records.push(Record {
            pass: step.pass,
            options: step.options.clone(),
            seconds,
            ops: op_counts(module),
        });
    }
    Ok(records)
}

/// A `config.get` the root still reaches after specialization has no value
/// to compile with.
fn unbound_config(session: &Session, module: &Module) -> Result<(), Failure> {
    let mut any = false;
    for op in ir::walk(module.as_operation().to_raw()) {
        if ir::op_name(op) != names::config::GET {
            continue;
        }
        let name = ir::symbol_ref(op, "name").unwrap_or_default();
        loom_passes::diagnostics::error(
            ir::location(op),
            &format!("@{name} has no value; give --config={name}=VALUE"),
        );
        any = true;
    }
    if any {
        return Err(Failure(session.take_diagnostics()));
    }
    Ok(())
}
