"""Where an .xdna's .ctrltext (the TXN control code) lies in the file, for
the fault-injection scripts beside this one."""
import struct
import sys


def ctrltext(data):
    """(file offset, size) of the .ctrltext section of the ELF bytes."""
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)

    def section(i):
        name, _, _, _, off, size = struct.unpack_from("<IIIIII", data, shoff + i * shentsize)
        return name, off, size

    _, strtab, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = data.index(b"\0", strtab + name)
        if data[strtab + name:end] == b".ctrltext":
            return off, size
    sys.exit("no .ctrltext section")
