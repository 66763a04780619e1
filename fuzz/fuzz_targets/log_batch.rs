#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fluss_writer_fuzz::log_batch(data));
