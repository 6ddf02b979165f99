//! The AIE2P decoder on any bytes: each bundle decodes or is refused with
//! an error, never a panic. A bundle it decodes re-encodes to bytes that
//! decode to it again (bits the formats leave as don't-care read as zero),
//! its text parses back, and the rule checker answers.

#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_aie2p_isa::{decode_one, parse_bundle, print_bundle, rules, Bundle};

fuzz_target!(|bytes: &[u8]| {
    let _ = rules::check(bytes, 0);
    let mut at = 0;
    while at < bytes.len() {
        let Ok((bundle, size)) = decode_one(&bytes[at..], at) else {
            return;
        };
        let encoded = bundle.encode().expect("a decoded bundle encodes");
        let (again, _) = decode_one(&encoded, 0).expect("an encoded bundle decodes");
        assert_eq!(again, bundle, "decode(encode(bundle)) changed the bundle");
        let text = print_bundle(&bundle);
        let parsed = parse_bundle(&text).expect("printed text parses");
        Bundle::pack(parsed).expect("parsed text packs");
        at += size;
    }
});
