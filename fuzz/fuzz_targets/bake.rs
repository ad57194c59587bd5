#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| orogen_fuzz::bake(data));
