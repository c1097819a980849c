//! Fuzz target for the VMD reader and writer: never panics; whatever parses writes and parses
//! again to the same motion.
#![no_main]

use ikarus_formats::mmd::vmd::Vmd;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(vmd) = Vmd::parse(data, 1.0) else {
        return;
    };
    // A model name Shift-JIS cannot hold again (decoded from a lossy field) may refuse to
    // write; anything written must read back equal.
    if let Ok(bytes) = vmd.write(1.0) {
        let again = Vmd::parse(&bytes, 1.0).expect("written VMD parses");
        assert!(again == vmd, "VMD write → read changed the motion");
    }
});
