#!/usr/bin/env python3
"""Decode llvm-aie's golden encodings with Loom's derived tables and compare the text.

    python3 scripts/aie2p-isa/check.py [DATA_DIR] [--verbose] [--family NAME] [--strict]

For every (bytes, text) pair of golden.json: form the little-endian bundle integer, take the
format whose size matches the byte count and whose fixed bits match, cut out each slot, pick the
instruction of that slot whose fixed bits match (the most specific one), decode each operand
(register by encoding within its class, composite register operand by its tag, immediate by
width, signedness and scale), print the assembly text from the instruction's asm string and
compare it with llvm-objdump's text the way FileCheck does (whitespace runs equal, `{{re}}` a
regular expression). Prints agreement per family and per slot, and the reasons for every miss.

This decoder is the specification the Rust crate follows; it uses only targets/aie2p-isa/data.
With --strict, exits 1 unless every pair of the families in STRICT_FAMILIES agrees and the
schedule checks (check_schedule: itineraries, operand counts, known timing facts) pass.
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "targets", "aie2p-isa", "data"))

# Families whose every pair must decode (scalar, ALU, load/store, move, branch, lock, nop, done).
STRICT_FAMILIES = None  # filled from the data: every family whose pairs are all scalar slots


class Miss(Exception):
    pass


def load(data):
    def j(n):
        return json.load(open(os.path.join(data, n), encoding="utf-8"))
    return (j("formats.json"), j("instructions.json"), j("registers.json"),
            j("operands.json"), j("golden.json"))


def extract_runs(word, runs):
    v = 0
    for r in runs:
        piece = (word >> r["lsb"]) & ((1 << r["width"]) - 1)
        v |= piece << r["field_lsb"]
    return v


def sext(v, w):
    return v - (1 << w) if v & (1 << (w - 1)) else v


class Decoder:
    def __init__(self, formats, insts, regs, operands):
        self.formats = formats["formats"]
        self.by_size = defaultdict(list)
        for f in self.formats:
            f["_fv"] = int(f["fixed_value"], 16)
            f["_fm"] = int(f["fixed_mask"], 16)
            self.by_size[f["size_bytes"]].append(f)
        self.by_slot = defaultdict(list)
        for i in insts["instructions"]:
            i["_fv"] = int(i["fixed_bits"], 16)
            i["_fm"] = int(i["fixed_mask"], 16)
            self.by_slot[i["slot"]].append(i)
        self.reg = {r["record"]: r for r in regs["registers"]}
        self.classes = {k: v["members"] for k, v in regs["classes"].items()}
        self.composite = regs["composite_operands"]
        self.imms = operands["immediates"]

    # ------------------------------------------------------------------ formats
    def format_of(self, word, nbytes):
        cands = [f for f in self.by_size.get(nbytes, []) if word & f["_fm"] == f["_fv"]]
        if not cands:
            raise Miss("no %d-byte format matches the fixed bits" % nbytes)
        if len(cands) > 1:
            raise Miss("formats ambiguous: " + ", ".join(f["name"] for f in cands))
        return cands[0]

    # ------------------------------------------------------------------ slots
    def inst_of(self, slot, value):
        """The instructions of the slot whose fixed bits match, most specific first."""
        cands = [i for i in self.by_slot.get(slot, []) if value & i["_fm"] == i["_fv"]]
        if not cands:
            raise Miss("slot %s value 0x%x matches no instruction" % (slot, value))
        return sorted(cands, key=lambda i: (-bin(i["_fm"]).count("1"), i["name"]))

    def decode_slot(self, slot, value):
        """Most specific match whose operands all decode (a register index outside its class
        rejects a candidate: PADDB_pstm_nrm_imm vs VLDB_4x32_* collide only that way). Two
        equally specific candidates that both decode are an ambiguity."""
        ok, errs = [], []
        for inst in self.inst_of(slot, value):
            if ok and bin(inst["_fm"]).count("1") < bin(ok[0][0]["_fm"]).count("1"):
                break
            try:
                ok.append((inst, self.print_inst(inst, value)))
            except Miss as e:
                errs.append("%s: %s" % (inst["name"], e))
        if not ok:
            raise Miss("slot %s value 0x%x: no candidate decodes (%s)" % (slot, value, "; ".join(errs)))
        if len(ok) > 1:
            raise Miss("slot %s value 0x%x ambiguous: %s" % (slot, value, ", ".join(i["name"] for i, _ in ok)))
        return ok[0]

    def check_coverage(self):
        """Every instruction's fixed, don't-care and operand bits tile its slot exactly."""
        bad = []
        for slot, insts in sorted(self.by_slot.items()):
            for i in insts:
                full, seen, clash = (1 << i["slot_width"]) - 1, 0, False
                for m in [i["_fm"], int(i["dontcare_mask"], 16)] + [
                        ((1 << r["width"]) - 1) << r["lsb"] for o in i["operands"] for r in o.get("bits", [])]:
                    clash |= bool(seen & m)
                    seen |= m
                if clash or seen != full:
                    bad.append(i["name"])
        return bad

    # ------------------------------------------------------------------ operands
    def reg_in_class(self, cls, enc, width):
        mask = (1 << width) - 1
        found = [m for m in self.classes[cls] if self.reg[m]["encoding"] & mask == enc]
        if not found:
            raise Miss("no register of %s has encoding %d" % (cls, enc))
        names = sorted(set(self.reg[m]["asm"] for m in found))
        if len(names) > 1:
            raise Miss("encoding %d ambiguous in %s: %s" % (enc, cls, ", ".join(names)))
        return names[0]

    def composite_reg(self, opclass, value, width):
        alts = self.composite[opclass]["alternatives"]
        if alts is None:
            raise Miss("no encoder table for %s" % opclass)
        hits = []
        for a in alts:
            if "register" in a:
                if value == int(a["value"], 2):
                    hits.append(self.reg[a["register"]]["asm"])
            else:
                tw = a["tag_width"]
                if value & ((1 << tw) - 1) == int(a["tag"], 2):
                    # The register is the member of the alternative's class at index
                    # value >> shift (class order). For every class this is the register's
                    # HWEncoding, except eQQse/eQQso (q0,q2 / q1,q3) whose HWEncodings 0..3 would
                    # overflow the 2-bit field; the golden tests decode q3 = 3, q0 = 0 this way.
                    idx = value >> a["shift"]
                    members = self.classes[a["regclass"]]
                    if idx < len(members):
                        hits.append(self.reg[members[idx]]["asm"])
        hits = sorted(set(hits))
        if not hits:
            raise Miss("%s value 0x%x matches no alternative" % (opclass, value))
        if len(hits) > 1:
            raise Miss("%s value 0x%x ambiguous: %s" % (opclass, value, ", ".join(hits)))
        return hits[0]

    def imm(self, cls, value, width):
        info = self.imms[cls]
        if info["kind"] == "address":
            return str(value)
        w = info["width"]
        if width != w:
            raise Miss("immediate %s: field has %d bits, operand %d" % (cls, width, w))
        if info.get("always_negative"):
            v = (value - (1 << w)) * info["scale"]
        elif info["signed"]:
            v = sext(value, w) * info["scale"]
        else:
            v = value * info["scale"]
        if info.get("negated"):
            v = -v
        return str(v)

    def operand_text(self, inst, name, word):
        ops = {o["name"]: o for o in inst["operands"]}
        o = ops.get(name)
        if o is None:
            raise Miss("%s: asm operand $%s is no operand" % (inst["name"], name))
        seen = set()
        while "tied_to" in o and "bits" not in o:
            if o["name"] in seen:
                raise Miss("tie loop")
            seen.add(o["name"])
            o = ops[o["tied_to"]]
        if "bits" not in o and "index_from" in o:
            # A decoder rule outside the TableGen (extract.py, apply_decoder_rules): the
            # register is the member of its class at the index the named operand's field holds.
            src = ops[o["index_from"]]
            idx = extract_runs(word, src["bits"])
            members = self.classes[o["regclass"]]
            if idx >= len(members):
                raise Miss("%s: index %d outside %s" % (inst["name"], idx, o["regclass"]))
            return self.reg[members[idx]]["asm"]
        if "bits" not in o:
            raise Miss("%s: operand $%s has no encoding field" % (inst["name"], name))
        v = extract_runs(word, o["bits"])
        if o["kind"] == "imm":
            return self.imm(o["class"], v, o["width"])
        if o["kind"] == "reg":
            return self.reg_in_class(o["regclass"], v, o["width"])
        return self.composite_reg(o["class"], v, o["width"])

    def print_inst(self, inst, value):
        def sub(m):
            return self.operand_text(inst, m.group(1) or m.group(2), value)
        args = re.sub(r"\$\{(\w+)\}|\$(\w+)", sub, inst["asm_args"])
        return (inst["mnemonic"] + " " + args).strip()

    # ------------------------------------------------------------------ bundles
    def decode(self, byts):
        word = int.from_bytes(byts, "little")
        fmt = self.format_of(word, len(byts))
        parts, used = [], []
        for s in fmt["slots"]:
            value = extract_runs(word, s["bits"])
            inst, text = self.decode_slot(s["slot"], value)
            parts.append(text)
            used.append((s["slot"], inst["name"]))
        return fmt, used, parts


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def pattern_matches(check, parts):
    """FileCheck-style comparison of the CHECK text with the printed slots."""
    text = " ; ".join(parts)
    pieces = re.split(r"\{\{(.*?)\}\}", check)
    rx = ""
    for i, p in enumerate(pieces):
        if i % 2:
            rx += "(?:%s)" % p
        else:
            rx += r"\s+".join(re.escape(w) for w in norm(p).split(" ")) if norm(p) else ""
            if p[:1].isspace() and rx and not rx.endswith(r"\s*"):
                pass
    # FileCheck matches a substring of the line
    return re.search(rx, norm(text)) is not None, text


# Known timing facts (xdna-hardware-facts.md §7, from llvm-aie's itineraries and
# AIEBaseInstrInfo.cpp): (instruction, operand name, expected cycle). A fact whose itinerary was
# not transcribed yet is reported as pending, not as a failure.
SCHED_FACTS = [
    ("LDA_dms_lda_idx_imm", "dst", 7, "scalar lda result at cycle 7"),
    ("LDA_dms_lda_pstm_nrm", "dst", 7, "scalar lda (post-modify) result at cycle 7"),
    ("VLDA_dmw_lda_w_idx_imm", "dst", 7, "vector load result at cycle 7"),
    ("VMAC_f_vmac_bf_vmul_bf_core_X_X", "dst", 6, "bf16 vmac.f result at cycle 6"),
    ("VMAC_f_vmac_bf_vmul_bf_core_X_X", "acc1", 4, "bf16 vmac.f accumulator read at cycle 4"),
    ("MOV_alu_mv_mv_mv_scl", "dst", 1, "scalar move result at cycle 1"),
    ("JL_lng", "lr", 4, "jl writes lr at cycle 4"),
    ("JL_alumv_or", "lr", 4, "jl (register) writes lr at cycle 4"),
]


def check_schedule(data, insts):
    """Structural and fact checks of schedule.json; returns the number of failures."""
    sched = json.load(open(os.path.join(data, "schedule.json"), encoding="utf-8"))
    itins, per = sched["itineraries"], sched["instructions"]
    fails = 0
    no_itin = [i["name"] for i in insts["instructions"] if not per.get(i["name"], {}).get("itinerary")]
    have = [i for i in insts["instructions"] if per[i["name"]].get("itinerary") in itins]
    print("\nschedule: %d itineraries, %d functional units, bypasses %s; instructions with an "
          "itinerary class: %d / %d, with its data transcribed: %d"
          % (len(itins), len(sched["functional_units"]), ",".join(sched["bypasses"]),
             len(insts["instructions"]) - len(no_itin), len(insts["instructions"]), len(have)))
    if no_itin:
        print("  no itinerary class: %s" % ", ".join(no_itin))
    flags = [n for n, e in per.items() if e.get("itinerary_transcribed") != (e.get("itinerary") in itins)]
    if flags:
        fails += 1
        print("  BROKEN itinerary_transcribed flags: %s" % ", ".join(flags[:5]))
    fus = set(sched["functional_units"])
    for name, e in itins.items():
        if len(e["operand_names"]) != len(e["operand_cycles"]):
            fails += 1
            print("  BROKEN %s: %d names, %d cycles" % (name, len(e["operand_names"]), len(e["operand_cycles"])))
        for st in e["stages"]:
            if not set(st["units"]) <= fus:
                fails += 1
                print("  BROKEN %s: units %s" % (name, st["units"]))
        if "bypasses" in e and len(e["bypasses"]) > len(e["operand_cycles"]):
            fails += 1
            print("  BROKEN %s: more bypasses than operand cycles" % name)
    # operand cycles against the instruction's operands, in LLVM's order: explicit defs,
    # explicit uses, implicit defs, implicit uses
    exact = shorter = 0
    names_ok = names_bad = 0
    for i in have:
        e = itins[per[i["name"]]["itinerary"]]
        ops = ([o["name"] for o in i["operands"] if o["dir"] == "out"]
               + [o["name"] for o in i["operands"] if o["dir"] == "in"]
               + list(i.get("defs", [])) + list(i.get("uses", [])))
        n = len(e["operand_cycles"])
        if n == len(ops):
            exact += 1
        elif n < len(ops):
            shorter += 1
        else:
            fails += 1
            print("  BROKEN %s: %d operand cycles, %d operands" % (i["name"], n, len(ops)))
            continue
        if e["operand_names"] == ops[:n]:
            names_ok += 1
        else:
            names_bad += 1
            if names_bad <= 5:
                print("  names differ %s: itinerary %s, operands %s" % (i["name"], e["operand_names"], ops))
    print("  operand cycles vs operands (explicit defs, uses, implicit defs, uses): %d exact, %d "
          "shorter (the rest take LLVM's default), names agree %d / %d"
          % (exact, shorter, names_ok, len(have)))
    # The per-register-class variants time the same operands as the class they refine.
    variants = sched.get("register_class_itineraries", {})
    chosen = bad = 0
    for name, e in per.items():
        for choice in e.get("itinerary_by_register_class", []):
            chosen += 1
            v = variants.get(choice["itinerary"])
            base = itins.get(e.get("itinerary"))
            if v is None or base is None or v["operand_names"] != base["operand_names"]:
                bad += 1
                if bad <= 5:
                    print("  BROKEN %s: variant %s" % (name, choice["itinerary"]))
    fails += bad
    print("  per-register-class itineraries: %d variants for %d instructions, operands agree "
          "with their class: %d / %d" % (len(variants), sum(1 for e in per.values()
                                          if e.get("itinerary_by_register_class")),
                                          chosen - bad, chosen))
    ds = sched.get("delay_slots", {})
    dsl = [n for n, e in per.items() if e.get("has_delay_slot")]
    if ds.get("count") != 5 or any(per[n].get("delay_slots") != 5 for n in dsl):
        fails += 1
        print("  BROKEN delay slots")
    print("  delay slots: %s for %s" % (ds.get("count"), ", ".join(sorted(dsl))))
    pending = []
    for inst, op, want, what in SCHED_FACTS:
        e = per.get(inst)
        if e is None:
            fails += 1
            print("  BROKEN fact %s: no instruction %s" % (what, inst))
            continue
        it = itins.get(e["itinerary"])
        if it is None:
            pending.append("%s (%s)" % (what, e["itinerary"]))
            continue
        ops = ([o["name"] for o in next(x for x in insts["instructions"] if x["name"] == inst)["operands"]
                if o["dir"] == "out"])
        got = dict(zip(it["operand_names"], it["operand_cycles"])).get(op)
        ok = got == want
        fails += 0 if ok else 1
        print("  fact %-45s %s: %s (%s.%s = %s)" % (what, "ok" if ok else "FAILS", want, inst, op, got))
    for p in pending:
        print("  fact pending, itinerary not transcribed: %s" % p)
    return fails


def main(argv):
    data = DEFAULT_DATA
    verbose = strict = False
    only = None
    rest = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--verbose":
            verbose = True
        elif a == "--strict":
            strict = True
        elif a == "--family":
            only = argv[i + 1]
            i += 1
        else:
            rest.append(a)
        i += 1
    if rest:
        data = rest[0]
    formats, insts, regs, operands, golden = load(data)
    dec = Decoder(formats, insts, regs, operands)
    bad = dec.check_coverage()
    print("instructions: %d; slot coverage (fixed + don't-care + operand bits tile the slot): %s"
          % (len(insts["instructions"]), "all exact" if not bad else "BROKEN: " + ", ".join(bad)))
    # Self round trip: each instruction's fixed bits with every operand field 0 must decode
    # back to that instruction. Not golden evidence (no llvm-objdump text), a table check.
    rt_ok, rt_bad = 0, Counter()
    for ins in insts["instructions"]:
        try:
            got, _ = dec.decode_slot(ins["slot"], ins["_fv"])
            if got["name"] == ins["name"]:
                rt_ok += 1
            else:
                rt_bad["decodes as a more specific instruction (%s)" % got["name"]] += 1
        except Miss as e:
            rt_bad[re.sub(r"^.*?: (\w+: )?", "", str(e)).replace(ins["name"] + ": ", "")] += 1
    print("self round trip (fixed bits, operand fields 0): %d / %d" % (rt_ok, len(insts["instructions"])))
    for why, n in sorted(rt_bad.items(), key=lambda kv: (-kv[1], kv[0])):
        print("  %4d  %s" % (n, why))
    fam_tot, fam_ok = Counter(), Counter()
    slot_tot, slot_ok = Counter(), Counter()
    reasons = defaultdict(list)
    fam_slots = defaultdict(set)
    for p in golden["pairs"]:
        fam = p["family"]
        if only and fam != only:
            continue
        byts = bytes(int(b, 16) for b in p["bytes"].split())
        fam_tot[fam] += 1
        try:
            fmt, used, parts = dec.decode(byts)
            for s, _ in used:
                fam_slots[fam].add(s)
            ok, text = pattern_matches(p["asm"], parts)
            key = "+".join(s for s, _ in used)
            slot_tot[key] += 1
            if ok:
                fam_ok[fam] += 1
                slot_ok[key] += 1
            else:
                reasons[fam].append("text differs: %s  [%s] printed %r want %r"
                                    % (p["bytes"], ",".join(n for _, n in used), text, p["asm"]))
        except Miss as e:
            slot_tot["(undecoded)"] += 1
            reasons[fam].append("%s: %s (want %r)" % (p["bytes"], e, p["asm"]))
    total = sum(fam_tot.values())
    good = sum(fam_ok.values())
    print("golden pairs: %d, decoded to llvm-objdump's text: %d (%.1f%%)"
          % (total, good, 100.0 * good / total if total else 0))
    print("\nper family (golden file):")
    for fam in sorted(fam_tot):
        print("  %-16s %5d / %5d  %s" % (fam, fam_ok[fam], fam_tot[fam],
                                        "slots " + ",".join(sorted(fam_slots[fam])) if fam_slots[fam] else ""))
    print("\nper slot combination:")
    for k in sorted(slot_tot):
        print("  %-28s %5d / %5d" % (k, slot_ok[k], slot_tot[k]))
    nmiss = sum(len(v) for v in reasons.values())
    if nmiss:
        print("\nmisses (%d):" % nmiss)
        for fam in sorted(reasons):
            rs = reasons[fam]
            kinds = Counter(re.sub(r"0x[0-9a-f]+|\b\d+\b|'[^']*'|\"[^\"]*\"|\[.*?\]", "_", r.split(": ", 1)[-1])[:90]
                            for r in rs)
            print("  %s: %d" % (fam, len(rs)))
            shown = rs if verbose else rs[:3]
            for r in shown:
                print("    " + r)
    sfails = check_schedule(data, insts) if not only else 0
    if strict and (nmiss or sfails):
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
