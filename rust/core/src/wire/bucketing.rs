//! Bucket assignment for tables with a bucket key (docs/wire-format.md, "Bucketing"): Fluss's variant of
//! MurmurHash3 (x86, 32-bit) over the encoded bucket-key bytes, then a second mix of the hash,
//! then `mod bucket_count`.
//!
//! The variant differs from textbook MurmurHash3 in the tail: each of the `len % 4` trailing
//! bytes is mixed as a block of its own, and its value is the byte **sign-extended** to 32 bits
//! (Java reads a signed `byte` into an `int`). The official Rust client fluss-rs 1.0.0
//! zero-extends instead, so it disagrees with Java (and with this module) whenever a tail byte
//! is `>= 0x80`, e.g. the INT key 128: Java and this module say bucket 2 of 16, fluss-rs says 7.
//! We follow Java, the reference implementation of the server and of every other client.

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

/// The seed Fluss uses for bucket-key hashing.
pub const BUCKET_SEED: u32 = 42;

#[inline]
pub(crate) fn mix_k1(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline]
pub(crate) fn mix_h1(h: u32, k1: u32) -> u32 {
    (h ^ k1).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
}

#[inline]
pub(crate) fn fmix(mut h: u32, len: u32) -> u32 {
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Fluss/Flink MurmurHash3 of `bytes`: little-endian 4-byte blocks, then every tail byte as its
/// own sign-extended block, then the standard finalizer with the byte length.
pub fn fluss_murmur3_32(bytes: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = bytes.chunks_exact(4);
    for b in &mut blocks {
        h = mix_h1(h, mix_k1(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    }
    for &b in blocks.remainder() {
        h = mix_h1(h, mix_k1(b as i8 as i32 as u32));
    }
    fmix(h, bytes.len() as u32)
}

/// Java's `MathUtils.murmurHash(int)`: one more mixing round of a hash (seed 0, length 4), made
/// non-negative (`i32::MIN` maps to 0).
fn murmur_int(code: u32) -> i32 {
    let h = fmix(mix_h1(0, mix_k1(code)), 4) as i32;
    if h == i32::MIN {
        0
    } else {
        h.abs()
    }
}

/// The bucket of a row whose bucket key encodes to `key_bytes` (compacted key encoding,
/// docs/wire-format.md, "Key encoding"), in a table of `bucket_count` buckets.
///
/// `key_bytes` is never empty for a validly encoded key (every encoding takes at least one
/// byte). Panics if `bucket_count <= 0`, which no valid table has.
pub fn bucket_for_key(key_bytes: &[u8], bucket_count: i32) -> i32 {
    assert!(bucket_count > 0, "bucket count must be positive, got {bucket_count}");
    debug_assert!(!key_bytes.is_empty(), "empty bucket key");
    murmur_int(fluss_murmur3_32(key_bytes, BUCKET_SEED)) % bucket_count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_verified_reference_values() {
        assert_eq!(bucket_for_key(&[0x00, 0x0a], 7), 1);
        assert_eq!(bucket_for_key(&[0x00, 0x0a, 0x0a, 0x0a], 12), 0);
        assert_eq!(bucket_for_key(b"The quick brown fox jumps over the lazy dog", 8), 6);
        assert_eq!(bucket_for_key(b"2bb87d68-baf9-4e64-90f9-f80910419fa6", 16), 6);
    }

    #[test]
    fn int_keys_with_sign_extended_tail_bytes() {
        // Compacted INT keys: 1 -> 01, 128 -> 80 01, 200 -> c8 01.
        assert_eq!(bucket_for_key(&[0x01], 16), 12);
        assert_eq!(bucket_for_key(&[0x80, 0x01], 16), 2);
        assert_eq!(bucket_for_key(&[0xc8, 0x01], 16), 6);
    }

    #[test]
    fn tail_bytes_are_sign_extended_not_zero_extended() {
        // A zero-extending hash would mix 0x80 as 0x00000080; ours mixes 0xFFFFFF80.
        let zero_extended = {
            let mut h = BUCKET_SEED;
            h = mix_h1(h, mix_k1(0x80));
            fmix(h, 1)
        };
        assert_ne!(fluss_murmur3_32(&[0x80], BUCKET_SEED), zero_extended);
        // Below 0x80 both readings agree.
        let same = fmix(mix_h1(BUCKET_SEED, mix_k1(0x7f)), 1);
        assert_eq!(fluss_murmur3_32(&[0x7f], BUCKET_SEED), same);
    }

    #[test]
    fn four_byte_blocks_match_textbook_murmur3() {
        // With no tail the variant is standard MurmurHash3_x86_32; reference values from the
        // canonical implementation (seed 0): "" -> 0, "abcd" -> 0x43ed676a.
        assert_eq!(fluss_murmur3_32(b"", 0), 0);
        assert_eq!(fluss_murmur3_32(b"abcd", 0), 0x43ed_676a);
    }

    #[test]
    fn buckets_are_in_range() {
        for i in 0..2000u32 {
            let b = bucket_for_key(&i.to_le_bytes()[..(i % 4 + 1) as usize], 13);
            assert!((0..13).contains(&b));
        }
    }
}
