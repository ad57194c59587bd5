#![no_main]

// One successful run in four is also written to a folder (orogen_fuzz::bake_writing); the
// corpus replay (`cargo test -p orogen-fuzz`) writes every one.
libfuzzer_sys::fuzz_target!(|data: &[u8]| orogen_fuzz::bake_writing(data, 4));
