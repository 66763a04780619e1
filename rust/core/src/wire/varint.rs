//! Unsigned LEB128 varints as Fluss uses them (docs/wire-format.md, "Conventions").
//!
//! Seven bits per byte, low group first, high bit set on every byte but the last. There is
//! **no zig-zag**: a negative `INT` is written as its 32-bit pattern (five bytes) and a
//! negative `BIGINT` as its 64-bit pattern (ten bytes). Decoding rejects truncated input,
//! varints longer than 5 (u32) or 10 (u64) bytes, and final bytes that carry bits beyond the
//! type's width; such bytes are reported as `CORRUPT_MESSAGE`.

use super::corrupt;
use crate::error::Result;

/// Append `v` as a varint (1 to 5 bytes).
#[inline]
pub fn put_u32(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Append `v` as a varint (1 to 10 bytes).
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Number of bytes [`put_u32`] writes for `v`.
#[inline]
pub fn size_u32(v: u32) -> usize {
    match v {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0xFFF_FFFF => 4,
        _ => 5,
    }
}

/// Read a varint of at most 5 bytes at `*pos`, advancing `pos` past it.
#[inline]
pub fn get_u32(buf: &[u8], pos: &mut usize) -> Result<u32> {
    let mut v: u32 = 0;
    for i in 0..5 {
        let b = *buf.get(*pos + i).ok_or_else(|| corrupt("truncated varint"))?;
        if i == 4 && b > 0x0F {
            return Err(corrupt("varint does not fit in 32 bits"));
        }
        v |= ((b & 0x7F) as u32) << (7 * i);
        if b & 0x80 == 0 {
            *pos += i + 1;
            return Ok(v);
        }
    }
    unreachable!("the fifth byte has no continuation bit after the range check")
}

/// Read a varint of at most 10 bytes at `*pos`, advancing `pos` past it.
#[inline]
pub fn get_u64(buf: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos + i).ok_or_else(|| corrupt("truncated varint"))?;
        if i == 9 && b > 0x01 {
            return Err(corrupt("varint does not fit in 64 bits"));
        }
        v |= ((b & 0x7F) as u64) << (7 * i);
        if b & 0x80 == 0 {
            *pos += i + 1;
            return Ok(v);
        }
    }
    unreachable!("the tenth byte has no continuation bit after the range check")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc32(v: u32) -> Vec<u8> {
        let mut out = Vec::new();
        put_u32(&mut out, v);
        out
    }

    fn enc64(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_u64(&mut out, v);
        out
    }

    #[test]
    fn known_encodings() {
        assert_eq!(enc32(0), [0x00]);
        assert_eq!(enc32(1), [0x01]);
        assert_eq!(enc32(30), [0x1e]);
        assert_eq!(enc32(127), [0x7f]);
        assert_eq!(enc32(128), [0x80, 0x01]);
        assert_eq!(enc32(200), [0xc8, 0x01]);
        assert_eq!(enc32(300), [0xac, 0x02]);
        assert_eq!(enc32(16_384), [0x80, 0x80, 0x01]);
        // -1 as INT: the 32-bit pattern, five bytes, no zig-zag.
        assert_eq!(enc32(-1i32 as u32), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(enc32(i32::MIN as u32), [0x80, 0x80, 0x80, 0x80, 0x08]);
        // -1 as BIGINT: ten bytes.
        assert_eq!(enc64(-1i64 as u64), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(enc64(u64::MAX >> 1), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    }

    #[test]
    fn sizes_match_encodings_at_boundaries() {
        for v in [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1F_FFFF, 0x20_0000, 0xFFF_FFFF, 0x1000_0000, u32::MAX] {
            assert_eq!(size_u32(v), enc32(v).len(), "{v:#x}");
        }
    }

    #[test]
    fn rejects_truncated_and_overlong_input() {
        let mut pos = 0;
        let e = get_u32(&[0x80, 0x80], &mut pos).unwrap_err();
        assert_eq!(e.code(), crate::FlussCode::CORRUPT_MESSAGE);
        assert_eq!(pos, 0);
        assert!(get_u32(&[0xff, 0xff, 0xff, 0xff, 0x1f], &mut 0).is_err());
        assert!(get_u32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], &mut 0).is_err());
        assert!(get_u64(&[0xff; 9], &mut 0).is_err());
        assert!(get_u64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], &mut 0).is_err());
        assert!(get_u64(&[], &mut 0).is_err());
    }

    #[test]
    fn reads_advance_the_position() {
        let buf = [0xac, 0x02, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let mut pos = 0;
        assert_eq!(get_u32(&buf, &mut pos).unwrap(), 300);
        assert_eq!(pos, 2);
        assert_eq!(get_u64(&buf, &mut pos).unwrap(), 5);
        assert_eq!(get_u32(&buf, &mut pos).unwrap(), u32::MAX);
        assert_eq!(pos, buf.len());
    }

    proptest! {
        #[test]
        fn round_trip_u32(v: u32) {
            let b = enc32(v);
            prop_assert_eq!(b.len(), size_u32(v));
            let mut pos = 0;
            prop_assert_eq!(get_u32(&b, &mut pos).unwrap(), v);
            prop_assert_eq!(pos, b.len());
        }

        #[test]
        fn round_trip_u64(v: u64) {
            let b = enc64(v);
            let mut pos = 0;
            prop_assert_eq!(get_u64(&b, &mut pos).unwrap(), v);
            prop_assert_eq!(pos, b.len());
        }
    }
}
