#!/usr/bin/env python3
"""Derive Loom's AIE2P instruction-set tables from llvm-aie's TableGen and golden tests.

    python3 scripts/aie2p-isa/extract.py [--only STAGE] SRC_DIR [OUT_DIR]

SRC_DIR holds the downloaded llvm-aie files at their repository paths (see README.md and
SOURCES.md); OUT_DIR defaults to targets/aie2p-isa/data. Three stages, each needing only its
own sources, so that one can be redone without downloading the others:
  tables    AIE2P TableGen -> slots.json, formats.json, instructions.json, registers.json,
            operands.json
  schedule  AIE2PGenSchedule.td (+ instructions.json of the tables stage) -> schedule.json
  golden    BinaryOutput/*.mir (or their .mir.checks) -> golden.json
Without --only, all three run in that order. Each file has a top-level "provenance" object.
Output is deterministic (sorted keys, stable order).

Bit numbering everywhere: bit 0 is the least significant bit of the little-endian integer the
bytes of a bundle form (byte 0 holds bits 7..0). A TableGen concatenation {a, b, c} lists its
pieces from the most significant end, as TableGen does.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tablegen as tg  # noqa: E402

REPO = "Xilinx/llvm-aie"
LICENSE = "Apache-2.0 WITH LLVM-exception"
T = "llvm/lib/Target/AIE/"

# Files read, in order (later files may use classes of earlier ones), and the commit the source
# index reported for each; SOURCES.md lists sizes and what was transcribed.
TD_FILES = [
    (T + "AIEBaseInstrFormats.td", "287ecc304b30e6c90c690b8c9c70b03d606eaba6"),
    (T + "AIEBaseInstrInfo.td", "287ecc304b30e6c90c690b8c9c70b03d606eaba6"),
    (T + "aie2p/AIE2PSlotInclude.td", "27010a642f0071ac9c380b63bd6577564d8efc21"),
    (T + "aie2p/AIE2PSlots.td", "685e83f8f375b088517d80322ea7e78f1e0de56e"),
    (T + "aie2p/AIE2PInstrFormats.td", "1b54f072a5d8354d7a226696c438097fb9f20505"),
    (T + "aie2p/AIE2PCompositeFormats.td", "685e83f8f375b088517d80322ea7e78f1e0de56e"),
    (T + "aie2p/AIE2PCompositeFormatsInclude.td", "bd07681ef7138ec73cf388d9ee02b4b8516247d7"),
    (T + "aie2p/AIE2PImmOperands.td", "1b54f072a5d8354d7a226696c438097fb9f20505"),
    (T + "aie2p/AIE2PRegisterInfo.td", "01202c28b97c658c31233bd5e68b59369b556755"),
    (T + "aie2p/AIE2PRegOperandDef.td", "bd07681ef7138ec73cf388d9ee02b4b8516247d7"),
    (T + "aie2p/AIE2PGenInstrInfo.td.excerpt", "1b54f072a5d8354d7a226696c438097fb9f20505"),
    (T + "aie2p/AIE2PInstrInfo.td", "043252874596d203dffee4782f38f9a928061963"),
]
EMITTER = (T + "MCTargetDesc/aie2p/AIE2PMCCodeEmitterGen.inc.excerpt",
           "1b54f072a5d8354d7a226696c438097fb9f20505")
GOLDEN_DIR = "llvm/test/CodeGen/AIE/aie2p/BinaryOutput"
# Every golden file: its commit as the source index reported it, its size upstream and the
# number of CHECK lines it has (golden-sources.tsv, kept beside this script).
GOLDEN_SOURCES = os.path.join(HERE, "golden-sources.tsv")

# Instruction flags copied from the records when set.
FLAGS = ["hasDelaySlot", "mayLoad", "mayStore", "hasSideEffects", "isSlotNOP", "isMoveImm",
         "isReMaterializable", "isAsCheapAsAMove"]


def fail(msg):
    raise SystemExit("extract.py: " + msg)


# --------------------------------------------------------------------------- bit patterns

def flatten(value, env, widths, where):
    """A TableGen bits value -> list of bits, most significant first.

    Each bit is ('0'|'1'), ('x',) for don't-care, or ('f', field, bit) for bit `bit` of field
    `field` (an operand or slot field declared `bits<N> field`)."""
    v = value
    if isinstance(v, tuple) and v[0] == "ast":
        v, env = v[1], v[2]
    k = v[0]
    if k == "concat":
        out = []
        for item in v[1]:
            out += flatten(item, env, widths, where)
        return out
    if k == "bits":
        return [str((v[2] >> i) & 1) for i in range(v[1] - 1, -1, -1)]
    if k == "id":
        name = v[1]
        if name not in widths:
            fail("%s: %s is not a declared bits field" % (where, name))
        return [("f", name, i) for i in range(widths[name] - 1, -1, -1)]
    if k == "slice":
        base = v[1]
        if base[0] != "id":
            fail("%s: slice of %r" % (where, base))
        name = base[1]
        bits = []
        for hi, lo in v[2]:
            step = -1 if hi >= lo else 1
            bits += list(range(hi, lo + step, step))
        if name == "dontcare":
            return [("x",) for _ in bits]
        if name not in widths:
            fail("%s: slice of undeclared field %s" % (where, name))
        return [("f", name, b) for b in bits]
    fail("%s: cannot flatten %r" % (where, v[:2]))


def pattern_summary(bits):
    """MSB-first bit list -> fixed value/mask, don't-care mask and per-field segments."""
    n = len(bits)
    fixed = mask = dc = 0
    segs = {}
    for idx, b in enumerate(bits):
        pos = n - 1 - idx
        if b in ("0", "1"):
            mask |= 1 << pos
            if b == "1":
                fixed |= 1 << pos
        elif b[0] == "x":
            dc |= 1 << pos
        else:
            segs.setdefault(b[1], []).append((pos, b[2]))
    fields = {}
    for name, pairs in segs.items():
        # merge into runs where both the position and the field bit step down together
        pairs.sort(key=lambda p: -p[0])
        runs = []
        for pos, fb in pairs:
            if runs and runs[-1]["lsb"] - 1 == pos and runs[-1]["field_lsb"] - 1 == fb:
                runs[-1]["lsb"] -= 1
                runs[-1]["field_lsb"] -= 1
                runs[-1]["width"] += 1
            else:
                runs.append({"lsb": pos, "field_lsb": fb, "width": 1})
        fields[name] = sorted(runs, key=lambda r: -r["lsb"])
    return fixed, mask, dc, fields


def hexs(x, nbits):
    return "0x%0*x" % ((nbits + 3) // 4, x)


# --------------------------------------------------------------------------- loading

def load(src):
    R = tg.Records()
    texts = {}
    for path, _ in TD_FILES:
        full = os.path.join(src, path)
        if not os.path.exists(full):
            fail("missing source file %s (see README.md)" % full)
        text = open(full, encoding="utf-8").read()
        texts[path] = text
        R.add_file(text, path)
    return R, texts


def field_value(R, rec, name):
    vals, types, slices = R.fields(rec)
    if name not in vals:
        return None
    v, env = vals[name]
    return tg.evaluate(v, env)


def dag_items(val):
    """('ast', ('dag', op, args), env) -> (op name, [(class or None, varname)])."""
    if not (isinstance(val, tuple) and val[0] == "ast" and val[1][0] == "dag"):
        fail("expected a dag, got %r" % (val,))
    _, d, env = val
    op = d[1][1] if d[1][0] == "id" else None
    items = []
    for a, n in d[2]:
        cls = None
        if a is not None:
            ev = tg.evaluate(a, env)
            cls = ev[1] if isinstance(ev, tuple) and ev[0] == "ref" else ev
        items.append((cls, n))
    return op, items


# --------------------------------------------------------------------------- slots

def extract_slots(R):
    slots = {}
    for name in R.order:
        rec = R.defs[name]
        if not any(c == "InstSlot" for c, _ in rec.parents):
            continue
        (cls, args), = [p for p in rec.parents if p[0] == "InstSlot"]
        slot_name = tg.evaluate(args[0], {})
        width = tg.evaluate(args[1], {})
        vals, _, _ = R.fields(rec)
        field = tg.evaluate(*vals["FieldToFind"]) if "FieldToFind" in vals else None
        art = bool(tg.evaluate(*vals["Artificial"])) if "Artificial" in vals else False
        slots[name] = {"record": name, "name": slot_name, "width": width, "field": field,
                       "artificial": art, "source": rec.fname}
    return slots


# --------------------------------------------------------------------------- formats

def extract_formats(R, slots):
    formats = []
    for name in R.order:
        rec = R.defs[name]
        chain = R.chain(rec)
        if "AIE2PCompositeInst" not in chain:
            continue
        vals, types, slices = R.fields(rec)
        size = tg.evaluate(*vals["Size"])
        widths = {n: t[1] for n, t in types.items() if t[0] == "bits"}
        _, ins = dag_items(tg.evaluate(*vals["InOperandList"]))
        slot_of_field = {}
        for cls, var in ins:
            if cls not in slots:
                fail("format %s: %s is not a slot" % (name, cls))
            slot_of_field[var] = cls

        def expand(fieldname, depth=0):
            if depth > 8:
                fail("format %s: recursion in %s" % (name, fieldname))
            v, env = vals[fieldname]
            bits = flatten(v, env, widths, name + "." + fieldname)
            out = []
            for b in bits:
                if b[0] == "f" and b[1] not in slot_of_field and b[1] in vals:
                    sub = expand(b[1], depth + 1)
                    # sub is MSB first of the intermediate field; pick the bit
                    out.append(sub[len(sub) - 1 - b[2]])
                else:
                    out.append(b)
            return out

        bits = expand("Inst")
        nbits = len(bits)
        if nbits != size * 8:
            fail("format %s: Inst has %d bits, Size %d" % (name, nbits, size))
        fixed, mask, dc, fields = pattern_summary(bits)
        for f in fields:
            if f not in slot_of_field:
                fail("format %s: field %s has no value and is no slot" % (name, f))
        slot_list = []
        for cls, var in ins:
            runs = fields.get(var, [])
            w = sum(r["width"] for r in runs)
            if w != slots[cls]["width"]:
                fail("format %s: slot %s covers %d bits, slot width %d" % (name, var, w, slots[cls]["width"]))
            slot_list.append({"slot": slots[cls]["name"], "field": var, "bits": runs})
        # the size code: the low fixed bits the composite class appends (Inst = {instrNN, code})
        cv, cenv = vals["Inst"]
        code_item = cv[1][-1] if cv[0] == "concat" else None
        code = None
        if code_item is not None and code_item[0] == "bits":
            code = {"width": code_item[1], "value": code_item[2],
                    "binary": format(code_item[2], "0%db" % code_item[1])}
        formats.append({
            "name": name,
            "class": rec.parents[0][0],
            "size_bytes": size,
            "size_bits": nbits,
            "size_code": code,
            "fixed_value": hexs(fixed, nbits),
            "fixed_mask": hexs(mask, nbits),
            "dontcare_mask": hexs(dc, nbits),
            "slots": slot_list,
        })
    return formats


# --------------------------------------------------------------------------- registers

def extract_registers(R):
    regs = {}
    for name in R.order:
        rec = R.defs[name]
        chain = R.chain(rec)
        if "Register" not in chain and not any(c == "Register" for c, _ in rec.parents):
            continue
        vals, types, slices = R.fields(rec)
        asm = None
        # the asm name is the argument of the Register<n> parent somewhere in the chain
        asm = register_asm_name(R, rec)
        enc = 0
        if "HWEncoding" in vals:
            ev = tg.evaluate(*vals["HWEncoding"])
            if not isinstance(ev, int):
                fail("register %s: HWEncoding %r" % (name, ev))
            enc = ev
        for (fname, rngs, v, env) in slices:
            if fname != "HWEncoding":
                continue
            ev = tg.evaluate(v, env)
            if not isinstance(ev, int):
                fail("register %s: HWEncoding slice value %r" % (name, ev))
            bitsl = []
            for hi, lo in rngs:
                step = -1 if hi >= lo else 1
                bitsl += list(range(hi, lo + step, step))
            for i, b in enumerate(bitsl):
                bit = (ev >> (len(bitsl) - 1 - i)) & 1
                enc = (enc & ~(1 << b)) | (bit << b)
        subs = []
        if "SubRegs" in vals:
            sv = tg.evaluate(*vals["SubRegs"])
            subs = [s[1] for s in sv] if isinstance(sv, list) else []
        regs[name] = {"record": name, "asm": asm, "encoding": enc, "subregs": subs}
    return regs


def register_asm_name(R, rec):
    def find(r, env):
        for cname, args in r.parents:
            if cname == "Register":
                return tg.paste_str(tg.evaluate(args[0], env))
            if cname in R.classes:
                c = R.classes[cname]
                e2 = {}
                for idx, (ty, pname, default) in enumerate(c.params):
                    if idx < len(args):
                        e2[pname] = tg.evaluate(args[idx], env)
                    elif default is not None:
                        e2[pname] = tg.evaluate(default, e2)
                got = find(c, e2)
                if got is not None:
                    return got
        return None
    return find(rec, {})


def extract_regclasses(R, regs):
    classes = {}

    def members(name, seen):
        if name in regs:
            return [name]
        if name not in R.defs or name in seen:
            fail("register class member %s unknown" % name)
        rec = R.defs[name]
        vals, _, _ = R.fields(rec)
        ml = tg.evaluate(*vals["Regs"]) if "Regs" in vals else None
        if ml is None:
            for cname, cargs in rec.parents:
                if cname == "RegisterClass":
                    ml = tg.evaluate(cargs[3], {})
        if ml is None:
            fail("register class %s has no member list" % name)
        op, items = dag_items(ml)
        if op != "add":
            fail("register class %s: (%s ...) is not handled" % (name, op))
        out = []
        for cls, _ in items:
            for m in members(cls, seen | {name}):
                if m not in out:
                    out.append(m)
        return out

    for name in R.order:
        rec = R.defs[name]
        if "RegisterClass" not in [c for c, _ in rec.parents] and "RegisterClass" not in R.chain(rec):
            continue
        classes[name] = members(name, set())
    return classes


# --------------------------------------------------------------------------- operand encoders

_EMIT_FN = re.compile(r"get(\w+)OpValue\(")
_EMIT_CLASS = re.compile(r"AIE2P::(\w+)RegClassID\]")
_EMIT_REG = re.compile(r"Reg == AIE2P::(\w+)\)")
_EMIT_SHIFT = re.compile(r"Result = \(Encoding << (\d+)\) \| 0b([01]+);")
_EMIT_LIT = re.compile(r"Result = 0b([01]+);")


def extract_emitters(src):
    path = os.path.join(src, EMITTER[0])
    if not os.path.exists(path):
        fail("missing %s" % path)
    out, cur, cond = {}, None, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("//"):
            continue
        m = _EMIT_FN.search(line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        m = _EMIT_CLASS.search(line)
        if m:
            cond = ("class", m.group(1))
            continue
        m = _EMIT_REG.search(line)
        if m:
            cond = ("reg", m.group(1))
            continue
        m = _EMIT_SHIFT.search(line)
        if m:
            if cond is None or cond[0] != "class":
                fail("emitter %s: shifted result without a class test" % cur)
            out[cur].append({"regclass": cond[1], "shift": int(m.group(1)),
                             "tag": m.group(2), "tag_width": len(m.group(2))})
            cond = None
            continue
        m = _EMIT_LIT.search(line)
        if m:
            if cond is None or cond[0] != "reg":
                fail("emitter %s: literal result without a register test" % cur)
            out[cur].append({"register": cond[1], "value": m.group(1), "width": len(m.group(1))})
            cond = None
            continue
        if "Register not in" in line:
            continue
        if line.strip():
            fail("emitter excerpt: unexpected line %r" % line)
    return out


def composite_table(op_classes, emitters, regclasses, regs):
    """Per composite operand class: the encoder alternatives, each with its members in class
    order (the member at index i is encoded as (i << shift) | tag) and whether that index equals
    the register's HWEncoding (llvm-aie's encoder uses the HWEncoding)."""
    out = {}
    for k, v in sorted(op_classes.items()):
        alts = emitters.get(v)
        if alts is None:
            fail("no encoder table for composite operand %s (%s)" % (k, v))
        rows = []
        for a in alts:
            a = dict(a)
            if "regclass" in a:
                members = regclasses[a["regclass"]]
                a["members"] = [regs[m]["asm"] for m in members]
                a["index_is_hwencoding"] = all(regs[m]["encoding"] == i for i, m in enumerate(members))
            else:
                a["asm"] = regs[a["register"]]["asm"]
            rows.append(a)
        out[k] = {"regclass": v, "alternatives": rows}
    return out


# --------------------------------------------------------------------------- immediates

def imm_info(R, name):
    """Describe an immediate operand def (c6u, c12n_step4, cpmaddr, ...)."""
    rec = R.defs[name]
    chain = R.chain(rec)
    vals, _, _ = R.fields(rec)

    def get(f):
        return tg.evaluate(vals[f][0], vals[f][1], vals) if f in vals else None
    dm, em, pm = get("DecoderMethod"), get("EncoderMethod"), get("PrintMethod")
    info = {"name": name, "decoder_method": dm, "encoder_method": em, "print_method": pm,
            "classes": chain}
    if name == "cpmaddr":
        info.update({"kind": "address", "signed": False, "width": 20, "scale": 1,
                     "note": "program-memory address; MCOperandPredicate isUInt<20>"})
        return info
    m = re.match(r"decodeUImmOperand<(\d+)>$", dm or "")
    if m:
        info.update({"kind": "imm", "signed": False, "width": int(m.group(1)), "scale": 1})
        if "txxsn" in chain:
            fail("unexpected")
        return info
    m = re.match(r"decodeSImmOperand<(\d+)>$", dm or "")
    if m:
        info.update({"kind": "imm", "signed": True, "width": int(m.group(1)), "scale": 1})
        if "txxsn" in chain:
            info["negated"] = True
        return info
    m = re.match(r"decodeSImmOperandXStep<(\d+), (\d+), (\d+)>$", dm or "")
    if m:
        n, step, neg = int(m.group(1)), int(m.group(2)), int(m.group(3))
        info.update({"kind": "imm", "signed": True, "width": n, "scale": step,
                     "always_negative": bool(neg)})
        return info
    fail("immediate %s: decoder method %r not understood" % (name, dm))


# --------------------------------------------------------------------------- instructions

def slot_of_class(R, rec, slots):
    """Follow the class chain to AIE2PSlotInst<slot, ...>; return the slot record or None."""
    def walk(r, env):
        for cname, args in r.parents:
            if cname == "AIE2PSlotInst":
                s = tg.evaluate(args[0], env)
                return s[1] if isinstance(s, tuple) else s
            if cname in R.classes:
                c = R.classes[cname]
                e2 = {}
                for idx, (ty, pname, default) in enumerate(c.params):
                    if idx < len(args):
                        e2[pname] = tg.evaluate(args[idx], env)
                    elif default is not None:
                        e2[pname] = tg.evaluate(default, e2)
                got = walk(c, e2)
                if got:
                    return got
        return None
    return walk(rec, {})


_ASM_OP = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def extract_instructions(R, slots, regclasses, imm_names, op_classes):
    insts = []
    for name in R.order:
        rec = R.defs[name]
        chain = R.chain(rec)
        if "AIE2PSlotInst" not in chain:
            continue
        if "AIEPseudoInstrAttributes" in chain or "MultiSlot_Pseudo" in chain:
            continue
        slot_rec = slot_of_class(R, rec, slots)
        slot = slots[slot_rec]
        vals, types, slices = R.fields(rec)
        if vals.get("isPseudo") and tg.evaluate(*vals["isPseudo"]):
            continue
        widths = {n: t[1] for n, t in types.items() if t[0] == "bits"}
        widths.setdefault(slot["field"], slot["width"])
        sv, senv = vals[slot["field"]]
        bits = flatten(sv, senv, widths, name)
        if len(bits) != slot["width"]:
            fail("%s: slot pattern has %d bits, slot %s is %d" % (name, len(bits), slot["name"], slot["width"]))
        fixed, mask, dc, fields = pattern_summary(bits)
        _, outs = dag_items(tg.evaluate(*vals["OutOperandList"]))
        _, ins = dag_items(tg.evaluate(*vals["InOperandList"]))
        asm = tg.evaluate(*vals["AsmString"])
        mnemonic, _, args = asm.partition("\t")
        constraints = tg.evaluate(*vals["Constraints"]) if "Constraints" in vals else ""
        ties = {}
        for c in [c.strip() for c in (constraints or "").split(",") if c.strip()]:
            m = re.match(r"\$(\w+)\s*=\s*\$(\w+)$", c)
            if not m:
                fail("%s: constraint %r" % (name, c))
            ties[m.group(1)] = m.group(2)
        operands = []
        for direction, items in (("out", outs), ("in", ins)):
            for cls, var in items:
                op = {"name": var, "dir": direction, "class": cls}
                if cls in imm_names:
                    op["kind"] = "imm"
                elif cls in op_classes:
                    op["kind"] = "reg_composite"
                    op["regclass"] = op_classes[cls]
                elif cls in regclasses:
                    op["kind"] = "reg"
                    op["regclass"] = cls
                else:
                    fail("%s: operand %s has unknown class %s" % (name, var, cls))
                if var in fields:
                    op["bits"] = fields[var]
                    op["width"] = widths[var]
                elif var in ties:
                    op["tied_to"] = ties[var]
                else:
                    op["implicit"] = True
                operands.append(op)
        for f in fields:
            if f not in [o["name"] for o in operands]:
                fail("%s: encoding field %s is no operand" % (name, f))
        asm_order = [a or b for a, b in _ASM_OP.findall(args)]
        entry = {
            "name": name,
            "mnemonic": mnemonic,
            "asm_args": args,
            "asm_operands": asm_order,
            "slot": slot["name"],
            "slot_width": slot["width"],
            "fixed_bits": hexs(fixed, slot["width"]),
            "fixed_mask": hexs(mask, slot["width"]),
            "dontcare_mask": hexs(dc, slot["width"]),
            "operands": operands,
            "itinerary": (tg.evaluate(*vals["Itinerary"])[1] if "Itinerary" in vals else None),
            "source": rec.fname,
        }
        for fl in FLAGS:
            if fl in vals:
                v = tg.evaluate(*vals[fl])
                if isinstance(v, int) and v:
                    entry.setdefault("flags", []).append(fl)
        for lst in ("Defs", "Uses"):
            if lst in vals:
                v = tg.evaluate(*vals[lst])
                if isinstance(v, list) and v:
                    entry[lst.lower()] = [x[1] for x in v]
        if constraints:
            entry["constraints"] = constraints
        if "DecoderMethod" in vals:
            dmv = tg.evaluate(*vals["DecoderMethod"])
            if dmv:
                entry["decoder_method"] = dmv
        insts.append(entry)
    apply_decoder_rules(insts)
    return insts


# --------------------------------------------------------------------------- decoder rules
# Facts of llvm-aie's disassembler that are not in the TableGen encodings. The FIFO loads
# (vlda.pop.*, vlda.fill.512, vldb.pop*, vldb.fill*) print $fifo_reg (lf0/lf1) and $pos
# (r24/r25), which have no encoding field. The generated decoder methods named by their
# DecoderMethod (DecodeVLDA_POP_576_normal_pop, DecodeDmx_lda_fifo_qx__fifo_2d_pop, ...) read
# fifo_reg, fifo_reg_out, pos and pos_out with the same fieldFromInstruction(Insn, lsb, width)
# as the 1-bit ePS pointer $ptr (slot bit 17 in lda, 14 in ldb) and index eLdFifoRegDecoderTable
# (lf0, lf1) and eRF2DecoderTable (r24, r25) with it. The tied super-register $ptr_superreg
# (ePSRFLdF: plfr0 = {p0, lf0, r24}, plfr1 = {p1, lf1, r25}, registers.json subregs) follows
# the same index. Recorded as `index_from`: the operand is member number <value of that
# operand's field> of its own register class (class order). Checked by check.py against the
# vld_pop_fill.mir golden pairs.
DECODER_RULES_SOURCE = ("llvm/lib/Target/AIE/Disassembler/AIE2PGenDecoderMethods.inc",
                        "6199d0b877c6b867f32db8a857393c95fad36c5b")
INDEX_FROM_PTR_CLASSES = ("eLdFifoReg", "eRF2", "ePSRFLdF")


def apply_decoder_rules(insts):
    n = 0
    for i in insts:
        ops = {o["name"]: o for o in i["operands"]}
        ptr = ops.get("ptr")
        for o in i["operands"]:
            if not o.get("implicit") or o.get("regclass") not in INDEX_FROM_PTR_CLASSES:
                continue
            if ptr is None or ptr.get("regclass") != "ePS" or "bits" not in ptr:
                fail("%s: %s (%s) has no 1-bit ePS $ptr to take its index from"
                     % (i["name"], o["name"], o["regclass"]))
            o["index_from"] = "ptr"
            n += 1
    return n


# --------------------------------------------------------------------------- schedule
# The itineraries (AIE2PGenSchedule.td) use LLVM's itinerary classes, defined in LLVM's
# llvm/include/llvm/Target/TargetItinerary.td (not in the source index; their parameters are
# LLVM facts, stated here): InstrStage<int cycles, list<FuncUnit> units, int timeinc = -1,
# ReservationKinds kind = Required> (timeinc -1: the next stage starts `cycles` later);
# InstrItinData<InstrItinClass, list<InstrStage> stages, list<int> operandcycles = [],
# list<Bypass> bypasses = [], int uops = 1>; ProcessorItineraries<list<FuncUnit>,
# list<Bypass>, list<InstrItinData>>. llvm-aie adds MemInstrItinData<Class, stages,
# operandcycles, MemoryCycles<[cycle...]> ...> (the cycles of the memory access; emitted by its
# AIEMemoryCycleEmitter). Any other class or argument shape fails loudly.
SCHED_FILES = [
    (T + "aie2p/AIE2PGenSchedule.td.excerpt", "1b54f072a5d8354d7a226696c438097fb9f20505"),
    (T + "aie2p/AIE2PSchedule.td", "685e83f8f375b088517d80322ea7e78f1e0de56e"),
]
# The per-register-class itineraries: the entries after the first of each `// id:` group of
# AIE2PGenSchedule.td (VARIANTS_FILE, one a line), and the ItineraryRegPairs lists of
# AIE2PGenInstrInfo.td that choose them (REGPAIRS_FILE: `<def>\tItinRegClassPair<...>` a line,
# `#count <def>\t<n>` after each def's list). SOURCES.md says how they were transcribed.
VARIANTS_FILE = (T + "aie2p/AIE2PGenSchedule.td.variants", "1b54f072a5d8354d7a226696c438097fb9f20505")
REGPAIRS_FILE = (T + "aie2p/AIE2PGenInstrInfo.td.regpairs", "1b54f072a5d8354d7a226696c438097fb9f20505")
EXTRA_ITIN_FILES = [
    (T + "aie2p/ExtraItinDecls.td", "f1061f60e016e2eb9e67ef1b4fae529be1c2e9ea"),
    (T + "aie2p/ExtraItineraries.td", "f1061f60e016e2eb9e67ef1b4fae529be1c2e9ea"),
]
ITINERARY_FILE = (T + "aie2p/AIE2PGenItinerary.td", "685e83f8f375b088517d80322ea7e78f1e0de56e")
DELAY_SLOTS = {
    "count": 5,
    "applies_to": "instructions with has_delay_slot (j, jl, jz, jnz, jnzd, ret)",
    "source": "llvm/lib/Target/AIE/AIEBaseInstrInfo.cpp (NumDelaySlots = 5); C++, not TableGen: "
              "stated as a fact, no text taken",
}
_ITIN_LINE = re.compile(r"^(Mem)?InstrItinData<(\w+),")
_OPCYCLE = re.compile(r"/\*(\w+)\*/(-?\d+)")
_BYPASS = re.compile(r"/\*(\w+)\*/([A-Za-z_]\w*)")


def _int(v, where):
    if not isinstance(v, int):
        fail("%s: expected an integer, got %r" % (where, v))
    return v


def _ref_list(v, where):
    if not isinstance(v, list) or not all(isinstance(x, tuple) and x[0] == "ref" for x in v):
        fail("%s: expected a list of records, got %r" % (where, v))
    return [x[1] for x in v]


def sched_stage(R, v, env, where):
    """A stage value (InstrStage<...>, a class deriving from it, or a def of one) -> dict."""
    ev = v
    if v[0] == "id":
        name = v[1]
        if name not in R.defs:
            fail("%s: stage %s is not defined" % (where, name))
        rec = R.defs[name]
        if len(rec.parents) != 1:
            fail("%s: stage def %s has %d parents" % (where, name, len(rec.parents)))
        return sched_stage(R, ("inst",) + rec.parents[0], {}, where)
    if ev[0] != "inst":
        fail("%s: stage %r is not a class instance" % (where, v))
    cname, args = ev[1], ev[2]
    if cname == "InstrStage":
        if not 2 <= len(args) <= 4:
            fail("%s: InstrStage with %d arguments" % (where, len(args)))
        vals = [tg.evaluate(a, env) for a in args]
        cycles = _int(vals[0], where)
        units = _ref_list(vals[1], where)
        timeinc = _int(vals[2], where) if len(vals) > 2 else -1
        kind = "Required"
        if len(vals) > 3:
            if not (isinstance(vals[3], tuple) and vals[3][0] == "ref"
                    and vals[3][1] in ("Required", "Reserved")):
                fail("%s: reservation kind %r" % (where, vals[3]))
            kind = vals[3][1]
        return {"cycles": cycles, "units": units,
                "timeinc": cycles if timeinc == -1 else timeinc, "kind": kind}
    if cname not in R.classes:
        fail("%s: unknown stage class %s" % (where, cname))
    c = R.classes[cname]
    e2 = {}
    for idx, (ty, pname, default) in enumerate(c.params):
        if idx < len(args):
            e2[pname] = tg.evaluate(args[idx], env)
        elif default is not None:
            e2[pname] = tg.evaluate(default, e2)
        else:
            fail("%s: %s lacks argument %s" % (where, cname, pname))
    if len(c.parents) != 1 or c.body:
        fail("%s: stage class %s is not a plain InstrStage alias" % (where, cname))
    pc, pargs = c.parents[0]
    # the class's parent arguments may name its parameters
    return sched_stage(R, ("inst", pc, [_rebind(a, e2) for a in pargs]), {}, where)


def _rebind(a, env):
    """Substitute class parameters (evaluated values) into a parent argument AST."""
    def to_ast(x):
        if isinstance(x, int):
            return ("int", x)
        if isinstance(x, tuple) and x[0] == "ref":
            return ("id", x[1])
        if isinstance(x, list):
            return ("list", [to_ast(y) for y in x])
        fail("cannot rebind %r" % (x,))
    return tg.substitute(a, {k: to_ast(v) for k, v in env.items()})


def parse_itin_entry(R, v, src, line_names, extra_units=()):
    if v[0] != "inst" or v[1] not in ("InstrItinData", "MemInstrItinData"):
        fail("%s: itinerary entry %r is not InstrItinData/MemInstrItinData" % (src, v[:2]))
    kind, args = v[1], v[2]
    cls = args[0]
    if cls[0] != "id":
        fail("%s: itinerary class %r" % (src, cls))
    name = cls[1]
    where = "%s: %s" % (src, name)
    stages_v = args[1]
    if stages_v[0] != "list":
        fail("%s: stages are not a list" % where)
    stages = [sched_stage(R, s, {}, where) for s in stages_v[1]]
    start = 0
    for st in stages:
        st["start"] = start
        start += st["timeinc"]
    opc = tg.evaluate(args[2], {}) if len(args) > 2 else []
    if not isinstance(opc, list) or not all(isinstance(x, int) for x in opc):
        fail("%s: operand cycles %r" % (where, opc))
    entry = {"kind": kind, "stages": stages, "operand_cycles": opc, "source": src}
    rest = args[3:]
    if kind == "MemInstrItinData":
        if not rest or rest[0][0] != "inst" or rest[0][1] != "MemoryCycles" or len(rest[0][2]) != 1:
            fail("%s: MemInstrItinData without MemoryCycles<[...]>" % where)
        mc = tg.evaluate(rest[0][2][0], {})
        if not isinstance(mc, list) or not all(isinstance(x, int) for x in mc):
            fail("%s: memory cycles %r" % (where, mc))
        entry["memory_cycles"] = mc
        rest = rest[1:]
    if rest:
        bp = tg.evaluate(rest[0], {})
        entry["bypasses"] = _ref_list(bp, where)
        rest = rest[1:]
    if rest:
        fail("%s: %d arguments more than handled" % (where, len(rest)))
    # operand names: the generator writes /*name*/ before each operand cycle and bypass
    names_c, names_b = line_names.get(name, ([], []))
    if [int(c) for _, c in names_c] != opc:
        fail("%s: commented operand cycles %r disagree with %r" % (where, names_c, opc))
    entry["operand_names"] = [n for n, _ in names_c]
    if "bypasses" in entry:
        if [b for _, b in names_b] != entry["bypasses"]:
            fail("%s: commented bypasses disagree" % where)
        entry["bypass_operands"] = [n for n, _ in names_b]
    return name, entry


def _line_names(text, src):
    out = {}
    for line in text.splitlines():
        m = _ITIN_LINE.match(line.strip())
        if not m:
            if "InstrItinData<" in line:
                fail("%s: itinerary entry not alone on its line: %r" % (src, line[:80]))
            continue
        name = m.group(2)
        # split the line at the operand-cycle list: everything after the stage list's "], ["
        i = line.index("], [") if "], [" in line else -1
        tail = line[i:] if i >= 0 else ""
        if "[]>" in line and i < 0:
            tail = ""
        out[name] = (_OPCYCLE.findall(tail), _BYPASS.findall(tail))
    return out


def extract_schedule(src):
    R = tg.Records()
    texts = {}
    for path, _ in SCHED_FILES + EXTRA_ITIN_FILES:
        full = os.path.join(src, path)
        if not os.path.exists(full):
            fail("missing source file %s (see README.md)" % full)
        texts[path] = open(full, encoding="utf-8").read()
    gen = SCHED_FILES[0][0]
    R.add_file(texts[gen], gen)
    R.add_file(texts[SCHED_FILES[1][0]], SCHED_FILES[1][0])
    R.add_file(texts[EXTRA_ITIN_FILES[0][0]], EXTRA_ITIN_FILES[0][0])
    if "AIE2PItineraries" not in R.defs:
        fail("%s: no AIE2PItineraries" % gen)
    (pc, pargs), = R.defs["AIE2PItineraries"].parents
    if pc != "ProcessorItineraries" or len(pargs) != 3:
        fail("AIE2PItineraries is not ProcessorItineraries<fu, bypasses, data>")
    fus = _ref_list(tg.evaluate(pargs[0], {}), "ProcessorItineraries units")
    bps = _ref_list(tg.evaluate(pargs[1], {}), "ProcessorItineraries bypasses")
    for u in fus:
        if u not in R.defs or R.defs[u].parents[0][0] != "FuncUnit":
            fail("functional unit %s is not a FuncUnit def" % u)
    for b in bps:
        if b not in R.defs or R.defs[b].parents[0][0] != "Bypass":
            fail("bypass %s is not a Bypass def" % b)
    names = _line_names(texts[gen], gen)
    itins = {}
    if pargs[2][0] != "list":
        fail("itinerary data is not a list")
    for v in pargs[2][1]:
        name, e = parse_itin_entry(R, v, gen, names)
        if name in itins:
            fail("itinerary %s twice" % name)
        itins[name] = e
    # ExtraItineraries.td is a list fragment (entries only); read it as one
    xsrc = EXTRA_ITIN_FILES[1][0]
    body = "\n".join(l for l in texts[xsrc].splitlines())
    XR = tg.Records()
    XR.classes, XR.defs = R.classes, dict(R.defs)
    XR.add_file("def ExtraItins__ : ProcessorItineraries<[], [], [\n" + body + "\n]>;", xsrc)
    xnames = _line_names(texts[xsrc], xsrc)
    extra = {}
    for v in XR.defs["ExtraItins__"].parents[0][1][2][1]:
        name, e = parse_itin_entry(XR, v, xsrc, xnames)
        e["units_unknown_to_processor_itineraries"] = sorted(
            {u for st in e["stages"] for u in st["units"] if u not in fus}) or None
        if e["units_unknown_to_processor_itineraries"] is None:
            del e["units_unknown_to_processor_itineraries"]
        extra[name] = e
    vsrc = VARIANTS_FILE[0]
    vfull = os.path.join(src, vsrc)
    if not os.path.exists(vfull):
        fail("missing source file %s (see README.md)" % vfull)
    vtext = open(vfull, encoding="utf-8").read()
    VR = tg.Records()
    VR.classes, VR.defs = R.classes, dict(R.defs)
    VR.add_file("def Variants__ : ProcessorItineraries<[], [], [\n" + vtext + "\n]>;", vsrc)
    vnames = _line_names(vtext, vsrc)
    variants = {}
    for v in VR.defs["Variants__"].parents[0][1][2][1]:
        name, e = parse_itin_entry(VR, v, vsrc, vnames)
        if name in itins or name in variants:
            fail("%s: itinerary %s twice" % (vsrc, name))
        variants[name] = e
    for e in list(itins.values()) + list(variants.values()):
        for st in e["stages"]:
            for u in st["units"]:
                if u not in fus:
                    fail("%s: unit %s is not in the processor's list" % (e["source"], u))
        for b in e.get("bypasses", []):
            if b not in bps and b != "NoBypass":
                fail("%s: bypass %s unknown" % (e["source"], b))
    model_rec = R.defs["AIE2PSchedModel"]
    mv, _, _ = R.fields(model_rec)
    model = {k: tg.evaluate(*mv[k]) for k in ("IssueWidth", "MicroOpBufferSize", "LoadLatency",
                                             "MispredictPenalty", "HighLatency", "CompleteModel",
                                             "PostRAScheduler") if k in mv}
    model["source"] = SCHED_FILES[1][0]
    return fus, bps, itins, variants, extra, model


_PAIR = re.compile(r"^ItinRegClassPair<(II_\w+), \[(.*)\]>$")
_OPERAND_CLASS = re.compile(r"^OperandRegClass<(\d+), (\w+)>$")


def extract_regpairs(src, insts, itineraries, classes):
    """ItineraryRegPairs: per instruction, the itineraries chosen by its operands' register
    classes, in list order, each with {operand name: class}."""
    path = os.path.join(src, REGPAIRS_FILE[0])
    if not os.path.exists(path):
        fail("missing source file %s (see README.md)" % path)
    by_name = {i["name"]: i for i in insts}
    pairs, counts = {}, {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        where = "%s:%d" % (REGPAIRS_FILE[0], n)
        f = line.rstrip("\n").split("\t")
        if f[0].startswith("#count "):
            counts[f[0][len("#count "):]] = int(f[1])
            continue
        if len(f) != 2 or f[0] not in by_name:
            fail("%s: expected <instruction>\\t<ItinRegClassPair>, got %r" % (where, line))
        m = _PAIR.match(f[1])
        if not m:
            fail("%s: not an ItinRegClassPair: %r" % (where, f[1]))
        itin, operands = m.group(1), {}
        # LLVM's operand index: explicit defs, then explicit uses, as instructions.json
        # lists them.
        ops = ([o for o in by_name[f[0]]["operands"] if o["dir"] == "out"]
               + [o for o in by_name[f[0]]["operands"] if o["dir"] == "in"])
        for piece in re.split(r",\s*(?=OperandRegClass)", m.group(2)):
            om = _OPERAND_CLASS.match(piece.strip())
            if not om:
                fail("%s: not an OperandRegClass: %r" % (where, piece))
            index, cls = int(om.group(1)), om.group(2)
            if index >= len(ops) or not ops[index]["kind"].startswith("reg"):
                fail("%s: operand %d of %s is no register operand" % (where, index, f[0]))
            if cls not in classes:
                fail("%s: register class %s is unknown" % (where, cls))
            operands[ops[index]["name"]] = cls
        if itin not in itineraries:
            fail("%s: itinerary %s is not transcribed" % (where, itin))
        pairs.setdefault(f[0], []).append({"itinerary": itin, "operands": operands})
    for name, n in counts.items():
        if len(pairs.get(name, [])) != n:
            fail("%s: %s has %d pairs, its #count says %d"
                 % (REGPAIRS_FILE[0], name, len(pairs.get(name, [])), n))
    if set(counts) != set(pairs):
        fail("%s: pairs without a #count line: %s" % (REGPAIRS_FILE[0], sorted(set(pairs) - set(counts))))
    return pairs


# --------------------------------------------------------------------------- golden

_CHECK = re.compile(r"^#\s*CHECK(?:-NEXT)?:\s*([0-9a-f]+):\s+(.*)$")


def golden_sources():
    """golden-sources.tsv: family -> (commit, characters upstream, CHECK lines upstream)."""
    rows = {}
    for n, line in enumerate(open(GOLDEN_SOURCES, encoding="utf-8"), 1):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) != 4 or not re.fullmatch(r"[0-9a-f]{40}", f[1]):
            fail("%s:%d: expected family, commit, characters, CHECK lines" % (GOLDEN_SOURCES, n))
        rows[f[0]] = (f[1], int(f[2]), int(f[3]))
    return rows


def extract_golden(src):
    d = os.path.join(src, GOLDEN_DIR)
    sources = golden_sources()
    pairs, files = [], []
    names = sorted(os.listdir(d)) if os.path.isdir(d) else []
    seen_family = {}
    for fn in names:
        if fn.endswith(".mir"):
            fam = fn[:-4]
        elif fn.endswith(".mir.checks"):
            fam = fn[:-11]
        else:
            continue
        if fam in seen_family:
            continue  # a whole .mir wins over a .mir.checks excerpt of the same file
        seen_family[fam] = fn
    missing = sorted(set(sources) - set(seen_family))
    if missing:
        fail("golden files listed in %s but not in %s: %s" % (GOLDEN_SOURCES, d, ", ".join(missing)))
    for fam in sorted(seen_family):
        fn = seen_family[fam]
        if fam not in sources:
            fail("golden file %s/%s is not listed in %s" % (d, fn, GOLDEN_SOURCES))
        commit, chars, checks = sources[fam]
        n = 0
        for line in open(os.path.join(d, fn), encoding="utf-8"):
            m = _CHECK.match(line.rstrip("\n"))
            if not m:
                continue
            addr, rest = m.group(1), m.group(2)
            toks = rest.split(" ")
            by = []
            while toks and re.fullmatch(r"[0-9a-f]{2}", toks[0]):
                by.append(toks.pop(0))
            text = " ".join(toks).strip()
            if not by or len(by) % 2:
                raise SystemExit("golden %s: cannot split %r" % (fn, rest))
            # The family names its file (provenance.files): a pair carries no path.
            pairs.append({"family": fam, "addr": int(addr, 16), "bytes": " ".join(by),
                          "asm": text})
            n += 1
        # A transcription must hold every CHECK line of its file: a short one is an
        # incomplete download, not a smaller test.
        if n != checks:
            fail("golden %s: %d CHECK lines, %s says the file has %d"
                 % (fn, n, os.path.basename(GOLDEN_SOURCES), checks))
        files.append({"path": GOLDEN_DIR + "/" + fam + ".mir", "transcribed_as": fn,
                      "pairs": n, "commit": commit, "characters_upstream": chars})
    return pairs, files


# --------------------------------------------------------------------------- main

def provenance(paths, command):
    return {
        "repository": REPO,
        "license": LICENSE,
        "files": [{"path": p, "commit": c} for p, c in paths],
        "generated_by": "scripts/aie2p-isa/extract.py",
        "command": command,
        "note": "Facts derived by Loom's own reader from llvm-aie's TableGen; no llvm-aie text "
                "or code is copied. Bit 0 is the least significant bit of the little-endian "
                "bundle integer.",
    }


def dump(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def write_tables(src, out, command):
    """The tables stage; returns the instructions for the schedule stage."""
    R, _ = load(src)

    slots = extract_slots(R)
    formats = extract_formats(R, slots)
    regs = extract_registers(R)
    regclasses = extract_regclasses(R, regs)
    emitters = extract_emitters(src)

    op_classes = {}
    for name in R.order:
        rec = R.defs[name]
        if rec.parents and rec.parents[0][0] == "AIEBaseRegisterOperand":
            arg = tg.evaluate(rec.parents[0][1][0], {})
            op_classes[name] = arg[1]
    imm_names = {}
    for name in R.order:
        rec = R.defs[name]
        chain = R.chain(rec)
        if name == "cpmaddr" or any(c in chain for c in ("txxu", "txxs", "txxsn", "immxstep")):
            imm_names[name] = imm_info(R, name)

    insts = extract_instructions(R, slots, regclasses, imm_names, op_classes)

    td = TD_FILES
    dump(os.path.join(out, "slots.json"), {
        "provenance": provenance([p for p in td if "Slot" in p[0]], command),
        "slots": sorted(slots.values(), key=lambda s: s["name"]),
    })
    dump(os.path.join(out, "formats.json"), {
        "provenance": provenance([p for p in td if "Composite" in p[0] or "Slot" in p[0]], command),
        "bit_order": "bit 0 = least significant bit of byte 0 (little-endian bundle integer)",
        "formats": formats,
    })
    used_classes = set()
    for i in insts:
        for o in i["operands"]:
            if "regclass" in o:
                used_classes.add(o["regclass"])
    dump(os.path.join(out, "registers.json"), {
        "provenance": provenance([p for p in td if "Register" in p[0] or "RegOperand" in p[0]]
                                 + [EMITTER], command),
        "registers": sorted(regs.values(), key=lambda r: r["record"]),
        "classes": {k: {"members": v, "used_by_instructions": k in used_classes}
                    for k, v in sorted(regclasses.items())},
        "composite_operands": composite_table(op_classes, emitters, regclasses, regs),
    })
    dump(os.path.join(out, "operands.json"), {
        "provenance": provenance([p for p in td if "Imm" in p[0] or "AIEBaseInstrInfo" in p[0]
                                  or "AIE2PInstrInfo.td" in p[0]], command),
        "immediates": {k: {kk: vv for kk, vv in v.items() if kk != "classes"}
                       for k, v in sorted(imm_names.items())},
    })
    dump(os.path.join(out, "instructions.json"), {
        "provenance": dict(provenance(td + [DECODER_RULES_SOURCE], command), decoder_rules=(
            "operands with `index_from`: no encoding field; the register is the member of the "
            "operand's register class (class order) at the index held by the field of the named "
            "operand (the FIFO loads' fifo_reg/pos/ptr_superreg from $ptr), as the generated "
            "decoder methods of %s read them" % DECODER_RULES_SOURCE[0])),
        "count": len(insts),
        "instructions": insts,
    })
    print("slots %d, formats %d, instructions %d, registers %d, register classes %d"
          % (len(slots), len(formats), len(insts), len(regs), len(regclasses)))
    return insts


def write_schedule(src, out, command, insts):
    td = TD_FILES
    fus, bps, itins, variants, extra, model = extract_schedule(src)
    path = os.path.join(out, "registers.json")
    if not os.path.exists(path):
        fail("the schedule stage needs %s (run the tables stage first)" % path)
    classes = json.load(open(path, encoding="utf-8"))["classes"]
    regpairs = extract_regpairs(src, insts, dict(itins, **variants), classes)
    sched = {}
    missing = set()
    for i in insts:
        e = {k: i[k] for k in ("itinerary", "defs", "uses") if k in i}
        e["has_delay_slot"] = "hasDelaySlot" in i.get("flags", [])
        if e["has_delay_slot"]:
            e["delay_slots"] = DELAY_SLOTS["count"]
        it = i.get("itinerary")
        if it in itins:
            e["itinerary_transcribed"] = True
        else:
            e["itinerary_transcribed"] = False
            if it:
                missing.add(it)
        if i["name"] in regpairs:
            e["itinerary_by_register_class"] = regpairs[i["name"]]
        sched[i["name"]] = e
    n_with = sum(1 for e in sched.values() if e["itinerary_transcribed"])
    dump(os.path.join(out, "schedule.json"), {
        "provenance": dict(provenance([p for p in td if "GenInstrInfo" in p[0]] + SCHED_FILES
                                      + [VARIANTS_FILE, REGPAIRS_FILE] + EXTRA_ITIN_FILES,
                                      command),
                           excerpt=(
            "AIE2PGenSchedule.td.excerpt: the header (FuncUnit, Bypass, stage classes, the "
            "ProcessorItineraries resource and bypass lists) verbatim, the InstrItinClass "
            "declarations dropped, and of the whole itinerary list the first entry of each "
            "`// id:` group (the itinerary an instruction names) without the `// id:` comment "
            "lines; AIE2PGenSchedule.td.variants: the other entries of each group (the "
            "per-register-class variants); AIE2PGenInstrInfo.td.regpairs: the ItineraryRegPairs "
            "lists that choose them (SOURCES.md)")),
        "note": "Per itinerary class: stages (functional units, cycles, the start cycle "
                "relative to issue, Required/Reserved), operand cycles (the cycle each "
                "operand is read or written, in LLVM's order: explicit defs, explicit uses, "
                "implicit defs, implicit uses; `operand_names` as the generator comments "
                "them), bypasses (per operand, NoBypass for none) and, for memory "
                "operations, the memory-access cycles. `itineraries` holds the classes "
                "instructions name, `register_class_itineraries` the variants their "
                "`itinerary_by_register_class` lists choose: the first entry whose every "
                "operand's register is in its class (llvm-aie's "
                "AIEVariableInstrItineraryEmitter keeps the list order), else the named class. "
                "Per instruction: its itinerary class, implicit defs/uses, delay slots.",
        "model": model,
        "delay_slots": DELAY_SLOTS,
        "functional_units": fus,
        "bypasses": bps,
        "itineraries": itins,
        "register_class_itineraries": variants,
        "extra_itineraries": extra,
        "coverage": {
            "itineraries": len(itins),
            "register_class_itineraries": len(variants),
            "instructions_with_register_class_itineraries": len(regpairs),
            "instructions": len(sched),
            "instructions_with_itinerary_data": n_with,
            "itinerary_classes_not_transcribed": sorted(missing),
        },
        "instructions": sched,
    })
    print("itineraries %d (and %d per register class, for %d instructions), instructions "
          "with their itinerary %d of %d" % (len(itins), len(variants), len(regpairs), n_with,
                                              len(sched)))


def write_golden(src, out, command):
    golden, gfiles = extract_golden(src)
    dump(os.path.join(out, "golden.json"), {
        "provenance": {
            "repository": REPO, "license": LICENSE,
            "files": gfiles,
            "generated_by": "scripts/aie2p-isa/extract.py", "command": command,
            "note": "Each pair is one CHECK line of llvm-objdump output: its file "
                    "(BinaryOutput/<family>.mir, listed under files), address, bytes in "
                    "memory order, and the expected text (a FileCheck pattern: {{...}} is a "
                    "regular expression, whitespace runs compare equal).",
        },
        "count": len(golden),
        "pairs": golden,
    })
    print("golden %d pairs from %d files" % (len(golden), len(gfiles)))


STAGES = ("tables", "schedule", "golden")


def main(argv):
    only = None
    if argv[:1] == ["--only"]:
        if len(argv) < 2 or argv[1] not in STAGES:
            raise SystemExit("--only takes one of: %s" % ", ".join(STAGES))
        only, argv = argv[1], argv[2:]
    if not argv or len(argv) > 2:
        raise SystemExit(__doc__)
    src = argv[0]
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "targets", "aie2p-isa", "data")
    out = os.path.normpath(out)
    os.makedirs(out, exist_ok=True)
    # Each file names the stage that writes it, however the script was run, so a file's
    # bytes do not depend on whether its stage ran alone.
    def command(stage):
        return "python3 scripts/aie2p-isa/extract.py --only %s <llvm-aie download dir>" % stage
    insts = None
    if only in (None, "tables"):
        insts = write_tables(src, out, command("tables"))
    if only in (None, "schedule"):
        if insts is None:
            path = os.path.join(out, "instructions.json")
            if not os.path.exists(path):
                fail("the schedule stage needs %s (run the tables stage first)" % path)
            insts = json.load(open(path, encoding="utf-8"))["instructions"]
        write_schedule(src, out, command("schedule"), insts)
    if only in (None, "golden"):
        write_golden(src, out, command("golden"))


if __name__ == "__main__":
    main(sys.argv[1:])
