#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tephra_adapters::fuzz_entry::manifest_yaml(data));
