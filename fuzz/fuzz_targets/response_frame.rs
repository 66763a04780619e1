#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fluss_writer_fuzz::response_frame(data));
