//! Fluss RPC framing (docs/wire-format.md, "RPC framing"): pure byte layout, no I/O.
//!
//! Every message in both directions is an `int32 BE` length followed by that many bytes.
//!
//! * Request: `int16 BE api_key`, `int16 BE api_version`, `int32 BE request_id`, protobuf body.
//! * Response: `int8 type`, then
//!   * `0` SUCCESS_RESPONSE: `int32 BE request_id`, protobuf response body;
//!   * `1` ERROR_RESPONSE: `int32 BE request_id`, protobuf `ErrorResponse`;
//!   * `2` SERVER_FAILURE: protobuf `ErrorResponse` **without** a request id; the server closes
//!     the connection after it.
//!
//! The encoders for responses and the decoder for requests exist for test servers.

use bytes::{Buf, Bytes};
use prost::Message;

use crate::error::{Error, FlussCode, Result};
use crate::wire::proto;

/// Bytes of the length prefix.
pub const LENGTH_LEN: usize = 4;
/// Bytes of a request header after the length (api key, version, request id).
pub const REQUEST_HEADER_LEN: usize = 8;
/// Response type byte of a success response.
pub const SUCCESS_RESPONSE: u8 = 0;
/// Response type byte of a request-level error response.
pub const ERROR_RESPONSE: u8 = 1;
/// Response type byte of a connection-level server failure (no request id).
pub const SERVER_FAILURE: u8 = 2;
/// Largest response frame a [`Connection`](super::connection::Connection) accepts unless told
/// otherwise (`client.response-max-size`, 100 MiB).
pub const DEFAULT_MAX_RESPONSE_FRAME: usize = crate::config::DEFAULT_RESPONSE_MAX_SIZE as usize;
/// How much of a frame body is read before the buffer grows again: a length prefix reserves at
/// most this much, whatever it says; the rest is allocated only as bytes arrive.
pub const READ_CHUNK: usize = 64 << 10;

/// Check a response length prefix against the configured maximum (`client.response-max-size`).
/// A frame can not be empty (it has at least its type byte), nor longer than `max`.
pub fn check_response_length(len: i32, max: usize) -> Result<usize> {
    if len < 1 {
        return Err(Error::protocol(format!("bad response frame length {len}")));
    }
    let len = len as usize;
    if len > max {
        return Err(Error::protocol(format!("response frame of {len} bytes exceeds client.response-max-size ({max} bytes); not read")));
    }
    Ok(len)
}

/// The length prefix and request header of a request, to be followed by `body_len` body bytes.
pub fn request_header(api_key: i16, api_version: i16, request_id: i32, body_len: usize) -> Result<[u8; LENGTH_LEN + REQUEST_HEADER_LEN]> {
    let len = i32::try_from(REQUEST_HEADER_LEN + body_len)
        .map_err(|_| Error::protocol(format!("request body of {body_len} bytes is too large for a frame")))?;
    let mut h = [0u8; LENGTH_LEN + REQUEST_HEADER_LEN];
    h[0..4].copy_from_slice(&len.to_be_bytes());
    h[4..6].copy_from_slice(&api_key.to_be_bytes());
    h[6..8].copy_from_slice(&api_version.to_be_bytes());
    h[8..12].copy_from_slice(&request_id.to_be_bytes());
    Ok(h)
}

/// A whole request frame (length prefix included).
pub fn encode_request(api_key: i16, api_version: i16, request_id: i32, body: &[u8]) -> Result<Vec<u8>> {
    let header = request_header(api_key, api_version, request_id, body.len())?;
    let mut out = Vec::with_capacity(header.len() + body.len());
    out.extend_from_slice(&header);
    out.extend_from_slice(body);
    Ok(out)
}

/// A decoded request frame (without its length prefix): for test servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFrame {
    pub api_key: i16,
    pub api_version: i16,
    pub request_id: i32,
    pub body: Bytes,
}

/// Decode a request frame (the bytes after the length prefix).
pub fn decode_request(mut frame: Bytes) -> Result<RequestFrame> {
    if frame.len() < REQUEST_HEADER_LEN {
        return Err(Error::protocol(format!("request frame of {} bytes is shorter than its header", frame.len())));
    }
    let api_key = frame.get_i16();
    let api_version = frame.get_i16();
    let request_id = frame.get_i32();
    Ok(RequestFrame { api_key, api_version, request_id, body: frame })
}

/// A decoded response frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseFrame {
    /// SUCCESS_RESPONSE: the protobuf body of the response to `request_id`.
    Success { request_id: i32, body: Bytes },
    /// ERROR_RESPONSE: the request failed as a whole (already converted to a server [`Error`]).
    Error { request_id: i32, error: Error },
    /// SERVER_FAILURE: the connection failed; the server closes it next.
    ServerFailure { error: Error },
}

fn decode_error_body(body: Bytes) -> Result<Error> {
    let e = proto::ErrorResponse::decode(body).map_err(|e| Error::protocol(format!("bad ErrorResponse body: {e}")))?;
    // An error frame that says "no error" is still an error: report it as UNKNOWN_SERVER_ERROR.
    let code = if e.error_code == FlussCode::NONE { FlussCode::UNKNOWN_SERVER_ERROR } else { e.error_code };
    Ok(Error::server(code, e.error_message.unwrap_or_default()))
}

/// Decode a response frame (the bytes after the length prefix).
pub fn decode_response(mut frame: Bytes) -> Result<ResponseFrame> {
    if frame.is_empty() {
        return Err(Error::protocol("empty response frame"));
    }
    let kind = frame.get_u8();
    match kind {
        SUCCESS_RESPONSE | ERROR_RESPONSE => {
            if frame.len() < 4 {
                return Err(Error::protocol(format!("response frame of type {kind} has no request id")));
            }
            let request_id = frame.get_i32();
            if kind == SUCCESS_RESPONSE {
                Ok(ResponseFrame::Success { request_id, body: frame })
            } else {
                Ok(ResponseFrame::Error { request_id, error: decode_error_body(frame)? })
            }
        }
        SERVER_FAILURE => {
            let error = decode_error_body(frame)?;
            Ok(ResponseFrame::ServerFailure { error })
        }
        other => Err(Error::protocol(format!("unknown response type {other}"))),
    }
}

fn with_length(payload: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(LENGTH_LEN + payload.len());
    out.extend_from_slice(&(payload.len() as i32).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

/// A whole SUCCESS_RESPONSE frame (length prefix included): for test servers.
pub fn encode_success_response(request_id: i32, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(5 + body.len());
    p.push(SUCCESS_RESPONSE);
    p.extend_from_slice(&request_id.to_be_bytes());
    p.extend_from_slice(body);
    with_length(p)
}

/// A whole ERROR_RESPONSE frame (length prefix included): for test servers.
pub fn encode_error_response(request_id: i32, error_code: i32, message: Option<&str>) -> Vec<u8> {
    let body = proto::ErrorResponse { error_code, error_message: message.map(str::to_string) }.encode_to_vec();
    let mut p = Vec::with_capacity(5 + body.len());
    p.push(ERROR_RESPONSE);
    p.extend_from_slice(&request_id.to_be_bytes());
    p.extend_from_slice(&body);
    with_length(p)
}

/// A whole SERVER_FAILURE frame (length prefix included, no request id): for test servers.
pub fn encode_server_failure(error_code: i32, message: Option<&str>) -> Vec<u8> {
    let body = proto::ErrorResponse { error_code, error_message: message.map(str::to_string) }.encode_to_vec();
    let mut p = Vec::with_capacity(1 + body.len());
    p.push(SERVER_FAILURE);
    p.extend_from_slice(&body);
    with_length(p)
}

/// The error every in-flight request gets when its connection fails: `NETWORK_EXCEPTION` (1),
/// retriable, so that the writer refreshes its metadata and retries.
pub fn network_error(message: impl Into<String>) -> Error {
    Error::server(FlussCode::NETWORK_EXCEPTION, message)
}

/// The error every in-flight request gets when its server broke the framing protocol (a
/// length over the limit, a truncated or undecodable frame, an answer to a request never
/// sent): `PROTOCOL`, but **retriable**, because the connection is closed and the next request
/// goes over a new one, where the same request may well succeed. An error inside one answer's
/// body (a protobuf that does not decode) is that request's own, non-retriable `PROTOCOL`.
pub fn protocol_violation(message: impl Into<String>) -> Error {
    Error::from_parts(crate::error::ClientCode::Protocol as i32, message, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_frame_layout() {
        let f = encode_request(1012, 0, 7, &[0xAA, 0xBB]).unwrap();
        assert_eq!(
            f,
            vec![
                0, 0, 0, 10, // length = 8 + 2
                0x03, 0xF4, // api key 1012
                0, 0, // version 0
                0, 0, 0, 7, // request id
                0xAA, 0xBB,
            ]
        );
        let f = encode_request(1016, 1, 0x7FFF_FFFF, &[]).unwrap();
        assert_eq!(f, vec![0, 0, 0, 8, 0x03, 0xF8, 0, 1, 0x7F, 0xFF, 0xFF, 0xFF]);
        let r = decode_request(Bytes::from(f[4..].to_vec())).unwrap();
        assert_eq!(r, RequestFrame { api_key: 1016, api_version: 1, request_id: 0x7FFF_FFFF, body: Bytes::new() });
        assert!(decode_request(Bytes::from_static(&[0, 1, 2])).is_err());
    }

    #[test]
    fn success_response() {
        let bytes = vec![0u8, 0, 0, 1, 0x2A, 0x08, 0x05];
        match decode_response(Bytes::from(bytes.clone())).unwrap() {
            ResponseFrame::Success { request_id, body } => {
                assert_eq!(request_id, 0x12A);
                assert_eq!(&body[..], &[0x08, 0x05]);
            }
            other => panic!("{other:?}"),
        }
        let mut framed = vec![0, 0, 0, 7];
        framed.extend_from_slice(&bytes);
        assert_eq!(encode_success_response(0x12A, &[0x08, 0x05]), framed);
    }

    #[test]
    fn error_response() {
        // type 1, id 3, ErrorResponse { error_code: 7, error_message: "no" }
        let bytes = vec![1u8, 0, 0, 0, 3, 0x08, 0x07, 0x12, 0x02, b'n', b'o'];
        match decode_response(Bytes::from(bytes.clone())).unwrap() {
            ResponseFrame::Error { request_id, error } => {
                assert_eq!(request_id, 3);
                assert_eq!(error.code(), 7);
                assert_eq!(error.message(), "no");
                assert!(!error.is_retriable());
            }
            other => panic!("{other:?}"),
        }
        let mut framed = vec![0, 0, 0, 11];
        framed.extend_from_slice(&bytes);
        assert_eq!(encode_error_response(3, 7, Some("no")), framed);
    }

    #[test]
    fn server_failure_has_no_request_id() {
        // type 2 directly followed by ErrorResponse { error_code: -1 } (varint of -1 is 10 bytes)
        let mut bytes = vec![2u8, 0x08];
        bytes.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        match decode_response(Bytes::from(bytes.clone())).unwrap() {
            ResponseFrame::ServerFailure { error } => {
                assert_eq!(error.code(), -1);
                assert_eq!(error.message(), "UNKNOWN_SERVER_ERROR");
            }
            other => panic!("{other:?}"),
        }
        let mut framed = vec![0, 0, 0, 12];
        framed.extend_from_slice(&bytes);
        assert_eq!(encode_server_failure(-1, None), framed);
    }

    #[test]
    fn malformed_responses_are_protocol_errors() {
        let code = crate::error::ClientCode::Protocol as i32;
        assert_eq!(decode_response(Bytes::new()).unwrap_err().code(), code);
        assert_eq!(decode_response(Bytes::from_static(&[0, 0, 0])).unwrap_err().code(), code);
        assert_eq!(decode_response(Bytes::from_static(&[9, 0, 0, 0, 0])).unwrap_err().code(), code);
        assert_eq!(decode_response(Bytes::from_static(&[1, 0, 0, 0, 1, 0xFF])).unwrap_err().code(), code);
        // an error frame without an error code is still an error
        match decode_response(Bytes::from_static(&[1, 0, 0, 0, 1])).unwrap() {
            ResponseFrame::Error { error, .. } => assert_eq!(error.code(), -1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn response_lengths_are_checked_against_the_limit() {
        let code = crate::error::ClientCode::Protocol as i32;
        assert_eq!(check_response_length(1, 10).unwrap(), 1);
        assert_eq!(check_response_length(10, 10).unwrap(), 10);
        for bad in [0, -1, i32::MIN, 11, i32::MAX] {
            let e = check_response_length(bad, 10).unwrap_err();
            assert_eq!(e.code(), code, "{bad}: {e:?}");
        }
        let e = check_response_length(i32::MAX, DEFAULT_MAX_RESPONSE_FRAME).unwrap_err();
        assert!(e.message().contains("client.response-max-size"), "{e:?}");
        assert!(protocol_violation("x").is_retriable());
        assert_eq!(protocol_violation("x").code(), code);
    }

    #[test]
    fn network_error_is_retriable_code_1() {
        let e = network_error("gone");
        assert_eq!(e.code(), 1);
        assert!(e.is_retriable());
    }
}
