//! The walkthrough worker's bf16 inner loop through the code generator
//! (`make bench`, docs/PERFORMANCE.md): machine-code size, bundles, NOP
//! share and `vmac.f` per cycle of the loop block, counted from the
//! emitted schedule (a turn of the loop takes its bundles' cycles: no
//! stall is modelled), beside the bound (one `vmac.f` a cycle: one vector
//! slot) and issue 16's target (0.9). The figures are the schedule's, the
//! same on every machine, so no host-time reference is needed.
//!
//! cargo bench -p loom-aie2p-codegen --bench codegen

use loom_aie2p_codegen::reference::{dot_product, vmac_f_count, DOT_PRODUCT_LOOP};
use loom_aie2p_codegen::{compile, Options, Program, StackRegion};
use std::error::Error;

/// One form of the loop and how many turns it runs.
struct Case {
    what: &'static str,
    groups: usize,
    shared: bool,
    turns: i64,
}

struct Figures {
    bytes: usize,
    bundles: usize,
    nop_bundles: usize,
    loop_bundles: usize,
    loop_macs: usize,
    /// Cycles of the whole function: the bundles before the loop, the
    /// loop's `turns - 1` times, the bundles after it.
    cycles: usize,
    macs: usize,
}

fn measure(program: &Program, turns: i64) -> Result<Figures, Box<dyn Error>> {
    let body = program
        .block(DOT_PRODUCT_LOOP)?
        .ok_or("the program has no loop block")?;
    let start = program
        .symbols
        .iter()
        .find(|s| s.name == DOT_PRODUCT_LOOP)
        .ok_or("no loop symbol")?
        .address as usize;
    let all = loom_aie2p_isa::decode(&program.bytes)?;
    let before = all.iter().filter(|(a, _)| *a < start).count();
    let after = all.len() - before - body.len();
    let bundles: Vec<_> = all.into_iter().map(|(_, b)| b).collect();
    let runs = usize::try_from(turns - 1)?;
    Ok(Figures {
        bytes: program.bytes.len(),
        bundles: program.bundles,
        nop_bundles: program.nop_bundles,
        loop_bundles: body.len(),
        loop_macs: vmac_f_count(&body),
        cycles: before + runs * body.len() + after,
        macs: vmac_f_count(&bundles) + (runs - 1) * vmac_f_count(&body),
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let options = Options {
        stack: StackRegion {
            base: 0x7_8000,
            size: 0x400,
        },
        registers_per_class: None,
    };
    let cases = [
        Case {
            what: "gate/up, 4 inputs a turn (the walkthrough worker)",
            groups: 4,
            shared: true,
            turns: 4,
        },
        Case {
            what: "gate/up, 4 inputs a turn (the walkthrough worker)",
            groups: 4,
            shared: true,
            turns: 32,
        },
        Case {
            what: "gate/up, 3 inputs a turn",
            groups: 3,
            shared: true,
            turns: 16,
        },
        Case {
            what: "two streams, 6 pairs a turn (no reuse)",
            groups: 6,
            shared: false,
            turns: 16,
        },
    ];
    println!(
        "| loop | K | code bytes | bundles | NOP share | loop bundles | loop vmac.f | vmac.f/cycle (loop) | of the bound | modelled cycles | vmac.f/cycle (function) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for case in &cases {
        let function = dot_product(case.groups, case.shared, case.turns)?;
        let program = compile(&function, &options)?;
        let f = measure(&program, case.turns)?;
        let rate = f.loop_macs as f64 / f.loop_bundles as f64;
        let k = 32 * case.groups as i64 * case.turns;
        println!(
            "| {} | {k} | {} | {} | {:.1}% | {} | {} | {:.3} | {:.1}% | {} | {:.3} |",
            case.what,
            f.bytes,
            f.bundles,
            100.0 * f.nop_bundles as f64 / f.bundles as f64,
            f.loop_bundles,
            f.loop_macs,
            rate,
            100.0 * rate,
            f.cycles,
            f.macs as f64 / f.cycles as f64,
        );
    }
    println!("bound: 1 vmac.f a cycle (one vector slot); issue 16's target: 0.9 in the loop");
    Ok(())
}
