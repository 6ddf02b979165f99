#!/usr/bin/env python3
"""Reference re-implementation of the bytes bootgen v2023.2 (-arch versal) writes for the BIF
   all: { id_code = 0x14ca8093  extended_id_code = 0x01
          image { name=aie_image, id=0x1c000000 { type=cdo file=A file=B ... } } }
   i.e. one image, one CDO partition, no boot header/PLM, no encryption/authentication/checksum.
   Layout from bootgen imageheadertable-versal.h / partitionheadertable-versal.h (see findings.md Q7).
   usage: make_pdi.py out.pdi in1.cdo [in2.cdo ...]   (CDO files as mlir-aie writes them)"""
import struct, sys

def words(b): return list(struct.unpack('<%dI' % (len(b) // 4), b))
def ck(ws): return (~sum(ws)) & 0xFFFFFFFF

def cdo_body(path):
    ws = words(open(path, 'rb').read())
    assert ws[0] == 4 and ws[1] == 0x004F4443 and ws[2] == 0x200, path
    assert ws[3] == len(ws) - 5 and ws[3] > 0, 'bootgen refuses a header-only CDO'
    return ws[5:]

def pdi(bodies, id_code=0x14CA8093, ext_id=1, image_id=0x1C000000, name=b'aie_image'):
    body = [w for b in bodies for w in b]
    cdo = [4, 0x004F4443, 0x200, len(body)]
    cdo += [ck(cdo)] + body
    SMAP, IHT, IH, PH = 0x10, 0x80, 0x40, 0x80
    ih_off, ph_off = SMAP + IHT, SMAP + IHT + IH
    part_off = ph_off + PH
    iht = [0x00040000, 1, ih_off // 4, 1, ph_off // 4, 0, id_code, 0, 0, 0, 0x50504449,
           (IHT // 4) | (IH // 4) << 8 | (PH // 4) << 16, (part_off - ih_off) // 4,
           0, 0, 0, 0, ext_id] + [0] * 13
    iht.append(ck(iht))
    nm = words(name.ljust(16, b'\0'))
    ih = [ph_off // 4, 1, 0, 0] + nm + [image_id, 0, 0, 0, 0, 0, 0]
    ih.append(ck(ih))
    n = len(cdo)                      # unencryptedPartitionLength = CDO words
    cdo += [0] * (-n % 4)             # the partition is zero-padded to 16 bytes
    t = len(cdo)                      # encrypted = total = padded words
    ph = [t, n, t, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, part_off // 4, 0x02000006, 1] + [0] * 20
    ph.append(ck(ph))
    smap = [0x000000DD, 0x11223344, 0x55667788, 0x99AABBCC]
    out = smap + iht + ih + ph + cdo
    assert len(iht) * 4 == IHT and len(ih) * 4 == IH and len(ph) * 4 == PH
    return struct.pack('<%dI' % len(out), *out)

if __name__ == '__main__':
    open(sys.argv[1], 'wb').write(pdi([cdo_body(p) for p in sys.argv[2:]]))
