//! CRC-32C (Castagnoli), the checksum of Fluss log batches and KV batches
//! (docs/wire-format.md, "CRC-32C").
//!
//! Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF; the check value of
//! `"123456789"` is 0xE3069283. The checksum is stored as a little-endian `u32` in the batch
//! header and covers everything from the SchemaId field to the end of the batch.

/// CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    ::crc32c::crc32c(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value_of_the_standard_test_string() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn empty_input_is_zero_and_one_byte_changes_it() {
        assert_eq!(crc32c(b""), 0);
        assert_ne!(crc32c(b"123456789"), crc32c(b"123456780"));
        // A second published vector (RFC 3720, 32 bytes of zeros).
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    }
}
