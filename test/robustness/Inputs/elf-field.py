"""Write a copy of an ELF32 file with one header field set:

    elf-field.py IN OUT FIELD VALUE

FIELD is a file-header field (e_phoff, e_ehsize, e_phnum, ...), `phN.FIELD`
of program header N (p_type, p_offset, p_filesz, ...), or `SECTION.FIELD`
of the section named SECTION (sh_type, sh_flags, ...)."""
import struct
import sys

source, out, field, value = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0)
data = bytearray(open(source, "rb").read())
FILE = {"e_type": (16, "H"), "e_machine": (18, "H"), "e_phoff": (28, "I"), "e_shoff": (32, "I"),
        "e_ehsize": (40, "H"), "e_phentsize": (42, "H"), "e_phnum": (44, "H"),
        "e_shentsize": (46, "H"), "e_shnum": (48, "H"), "e_shstrndx": (50, "H")}
PROGRAM = {"p_type": (0, "I"), "p_offset": (4, "I"), "p_vaddr": (8, "I"), "p_filesz": (16, "I"),
           "p_memsz": (20, "I"), "p_flags": (24, "I"), "p_align": (28, "I")}
SECTION = {"sh_name": (0, "I"), "sh_type": (4, "I"), "sh_flags": (8, "I"), "sh_offset": (16, "I"),
           "sh_size": (20, "I")}


def get(offset, kind):
    return struct.unpack_from("<" + kind, data, offset)[0]


if field in FILE:
    at, kind = FILE[field]
else:
    owner, name = field.split(".", 1) if not field.startswith(".") else field[1:].rsplit(".", 1)
    if owner.startswith("ph") and owner[2:].isdigit():
        at = get(28, "I") + 32 * int(owner[2:]) + PROGRAM[name][0]
        kind = PROGRAM[name][1]
    else:
        shoff, shnum, shstrndx = get(32, "I"), get(48, "H"), get(50, "H")
        strtab = get(shoff + 40 * shstrndx + 16, "I")
        for i in range(shnum):
            header = shoff + 40 * i
            start = strtab + get(header, "I")
            section = bytes(data[start:data.index(0, start)]).decode()
            if section == "." + owner:
                at, kind = header + SECTION[name][0], SECTION[name][1]
                break
        else:
            sys.exit(f"no section .{owner}")
struct.pack_into("<" + kind, data, at, value)
open(out, "wb").write(data)
