//! The facts of xdna-hardware-facts §7 as the itinerary tables give them.

use crate::isa;
use crate::schedule::{latency, Itinerary};

fn itinerary(opcode: &str) -> &'static Itinerary {
    let isa = isa();
    let opcode = isa.opcodes.iter().find(|o| o.name == opcode).unwrap();
    isa.itinerary(opcode).unwrap()
}

// The facts of xdna-hardware-facts §7, from the tables.
#[test]
fn a_scalar_load_result_is_read_seven_bundles_later() {
    let load = itinerary("LDA_dms_lda_idx_imm");
    let add = itinerary("ADD_alu_r_rr");
    let (operand, read) = add.operand_cycles().nth(1).unwrap();
    assert_eq!(read, 1);
    assert_eq!(load.cycle("dst"), Some(7));
    assert_eq!(load.memory_cycles, vec![5]);
    assert_eq!(latency(load, "dst", add, operand), Some(7));
}

#[test]
fn a_scalar_move_is_read_by_the_next_bundle() {
    let mov = itinerary("MOV_alu_mv_mv_mv_scl");
    assert_eq!(latency(mov, "dst", mov, "src"), Some(1));
}

#[test]
fn jl_writes_lr_at_cycle_four() {
    assert_eq!(itinerary("JL_lng").cycle("lr"), Some(4));
    assert_eq!(isa().schedule.delay_slots, 5);
}

#[test]
fn a_vector_load_result_is_read_seven_bundles_later() {
    let load = itinerary("VLDA_dmw_lda_w_idx_imm");
    assert_eq!(load.cycle("dst"), Some(7));
    assert_eq!(load.memory_cycles, vec![5]);
}

#[test]
fn bf16_vmac_reads_its_accumulator_at_four_and_writes_at_six() {
    let vmac = itinerary("VMAC_f_vmac_bf_vmul_bf_core_X_X");
    assert_eq!(vmac.cycle("dst"), Some(6));
    assert_eq!(vmac.cycle("acc1"), Some(4));
    // Back to back on one accumulator: 6 - 4 + 1 bundles, one less if
    // both ends name the accumulator bypass.
    let expected = if vmac.bypass("dst").is_some() && vmac.bypass("dst") == vmac.bypass("acc1") {
        2
    } else {
        3
    };
    assert_eq!(latency(vmac, "dst", vmac, "acc1"), Some(expected));
}

/// A move's itinerary depends on its registers (llvm-aie's
/// ItineraryRegPairs): the variant for the classes of the registers it
/// names, the class the opcode names when no variant's classes hold them.
#[test]
fn a_move_takes_the_itinerary_of_its_register_classes() {
    let isa = isa();
    let mov = |text: &str| {
        let bundle = crate::parse_bundle(text).unwrap();
        let instruction = bundle.into_iter().next().unwrap();
        instruction.itinerary().unwrap().name.clone()
    };
    let opcode = isa
        .opcodes
        .iter()
        .find(|o| o.name == "MOV_alu_mv_mv_mv_scl")
        .unwrap();
    assert_eq!(opcode.itinerary_by_register_class.len(), 529);
    let to_dj = mov("mov dj0, r1");
    assert!(to_dj.starts_with("II_MOV_alu_mv_mv_mv_scl_eDJ_"), "{to_dj}");
    assert_ne!(to_dj, mov("mov r2, r1"));
}
