//! `loom-resolve-target{target=TARGET:PROFILE}`: bind the target symbols a
//! module names to a device profile.
//!
//! Every `pipeline.def` or `func.def` whose `target(@sym)` names an
//! `aie2p.target` without a `device_profile` is rebound to a generated
//! context of the same kind carrying the profile, placed right after its
//! user: `aie2p.target<array> @__loom_target_context_0_J` for array
//! contexts, `..._1_J` for core contexts. The authored symbol stays (nothing
//! names it afterwards). Contexts that already carry a profile must carry
//! this one.
//!
//! ```text
//! loom-opt --loom-resolve-target=target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11
//! ```

use crate::diagnostics::error;
use crate::{options, PassInfo};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::BTreeSet;

inventory::submit! {
    PassInfo {
        argument: "loom-resolve-target",
        description: "Bind target symbols to generated aie2p.target contexts with a device profile (option target=TARGET:PROFILE)",
        takes_options: true,
        changes_ir: true,
        run,
    }
}

/// `TARGET:PROFILE` -> the profile, or a message listing what is known.
pub fn parse_target(spec: &str) -> Result<String, String> {
    // The device profiles are data (targets/xdna/profiles/*.json).
    let targets = loom_targets::targets();
    let known_targets: Vec<&str> = targets.keys().copied().collect();
    let Some((target, profile)) = spec.split_once(':') else {
        return Err(format!(
            "target `{spec}` is not TARGET:PROFILE; known: {}",
            targets
                .iter()
                .flat_map(|(t, ps)| ps.iter().map(move |p| format!("{t}:{p}")))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let Some(profiles) = targets.get(target) else {
        return Err(format!(
            "unknown target `{target}`; known targets: {}",
            known_targets.join(", ")
        ));
    };
    if !profiles.contains(&profile) {
        return Err(format!(
            "unknown device profile `{profile}` for target `{target}`; known profiles: {}",
            profiles.join(", ")
        ));
    }
    Ok(profile.to_string())
}

/// The first free `__loom_target_context_LEVEL_J`.
pub fn fresh_context_name(taken: &mut BTreeSet<String>, level: u32) -> String {
    fresh_symbol(taken, &format!("__loom_target_context_{level}_"))
}

/// A detached `aie2p.target<KIND> @NAME {device_profile = PROFILE}`.
pub fn context_op(ctx: MlirContext, kind: &str, name: &str, profile: &str) -> MlirOperation {
    let mut spec = OpSpec::new(names::aie2p::TARGET, unknown_location(ctx));
    spec.attributes = vec![
        ("sym_name", string_attr(ctx, name)),
        ("kind", string_attr(ctx, kind)),
        ("device_profile", string_attr(ctx, profile)),
    ];
    spec.build()
}

fn run(module: MlirOperation, options: &str) -> Result<(), ()> {
    let fail =
        |message: String| error(location(module), &format!("loom-resolve-target: {message}"));
    let mut parsed = options::parse(options).map_err(fail)?;
    // A misspelled option is reported as such, not as a missing `target`.
    if let Some(unknown) = parsed.keys().find(|key| key.as_str() != "target") {
        fail(format!(
            "unknown option `{unknown}`; the only option is `target`"
        ));
        return Err(());
    }
    let Some(spec) = parsed.remove("target") else {
        fail("the option target=TARGET:PROFILE is required".into());
        return Err(());
    };
    let profile = parse_target(&spec).map_err(fail)?;
    let ctx = context(module);
    let top = top_level_ops(module);
    let symbols = symbols(module);
    let mut taken: BTreeSet<String> = symbols.keys().cloned().collect();
    for user in top {
        if !matches!(
            op_name(user).as_str(),
            names::pipeline::DEF | names::func::DEF
        ) {
            continue;
        }
        let Some(target) = symbol_ref(user, "target") else {
            continue;
        };
        let Some(&declaration) = symbols.get(&target) else {
            continue;
        };
        if op_name(declaration) != names::aie2p::TARGET {
            continue;
        }
        if let Some(bound) = string_attribute(declaration, "device_profile") {
            if bound != profile {
                error(
                    location(declaration),
                    &format!("@{target} is bound to device profile `{bound}`, but the compilation targets `{profile}`"),
                );
                return Err(());
            }
            continue;
        }
        let kind = string_attribute(declaration, "kind").unwrap_or_default();
        let level = if kind == "array" { 0 } else { 1 };
        let name = fresh_context_name(&mut taken, level);
        let context_op = context_op(ctx, &kind, &name, &profile);
        insert_after(user, context_op);
        set_attribute(user, "target", flat_symbol_ref_attr(ctx, &name));
    }
    Ok(())
}
