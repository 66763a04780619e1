//! Timeouts given by applications: one conversion rule for every binding, and deadlines that
//! never overflow.
//!
//! A timeout is `Option<Duration>`, `None` meaning "no bound". Any `Duration` is accepted by every
//! blocking call of the core (`Duration::MAX` included): a deadline too far away to represent is
//! no bound at all. Bindings convert their own numbers with [`from_secs_f64`] (Python floats) and
//! [`from_millis_i64`] (C++ milliseconds) so that no input can make a conversion panic.

use std::time::{Duration, Instant};

use crate::error::{ClientCode, Error, Result};

/// The longest timeout kept as a bound; anything longer is treated as unbounded. About 31 years:
/// far beyond any real wait, and far from every overflow of `Instant` and of nanosecond counters.
pub const MAX_BOUNDED: Duration = Duration::from_secs(1_000_000_000);

/// A timeout in seconds, as Python passes it. NaN and negative values are
/// [`ClientCode::InvalidConfig`]; `+inf` and values beyond [`MAX_BOUNDED`] are `None` (no bound).
pub fn from_secs_f64(secs: f64) -> Result<Option<Duration>> {
    if secs.is_nan() {
        return Err(Error::client(ClientCode::InvalidConfig, "a timeout must be a number of seconds, not NaN"));
    }
    if secs < 0.0 {
        return Err(Error::client(
            ClientCode::InvalidConfig,
            format!("a timeout must not be negative (got {secs} s); use None for no bound"),
        ));
    }
    if secs >= MAX_BOUNDED.as_secs_f64() {
        return Ok(None);
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// A timeout in milliseconds, as C++ passes it: negative means no bound, and so does anything
/// beyond [`MAX_BOUNDED`].
pub fn from_millis_i64(ms: i64) -> Option<Duration> {
    let ms = u64::try_from(ms).ok()?;
    bounded(Duration::from_millis(ms))
}

/// `d`, or `None` when it is beyond [`MAX_BOUNDED`] (no bound).
pub fn bounded(d: Duration) -> Option<Duration> {
    (d <= MAX_BOUNDED).then_some(d)
}

/// The instant `timeout` from now, or `None` (no bound) when there is no timeout or the instant
/// cannot be represented.
pub fn deadline_after(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}

/// Milliseconds since the Unix epoch by the system clock (0 before it): the time partition
/// names and retention are reckoned in.
pub(crate) fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_from_python() {
        assert_eq!(from_secs_f64(1.5).unwrap(), Some(Duration::from_millis(1500)));
        assert_eq!(from_secs_f64(0.0).unwrap(), Some(Duration::ZERO));
        assert_eq!(from_secs_f64(f64::INFINITY).unwrap(), None);
        assert_eq!(from_secs_f64(1e300).unwrap(), None);
        assert_eq!(from_secs_f64(1e19).unwrap(), None);
        assert_eq!(from_secs_f64(-1.0).unwrap_err().code(), ClientCode::InvalidConfig as i32);
        assert_eq!(from_secs_f64(f64::NAN).unwrap_err().code(), ClientCode::InvalidConfig as i32);
        assert_eq!(from_secs_f64(f64::NEG_INFINITY).unwrap_err().code(), ClientCode::InvalidConfig as i32);
    }

    #[test]
    fn millis_from_cpp() {
        assert_eq!(from_millis_i64(250), Some(Duration::from_millis(250)));
        assert_eq!(from_millis_i64(-1), None);
        assert_eq!(from_millis_i64(i64::MIN), None);
        assert_eq!(from_millis_i64(i64::MAX), None);
    }

    #[test]
    fn deadlines_never_overflow() {
        assert_eq!(deadline_after(None), None);
        assert!(deadline_after(Some(Duration::from_secs(1))).is_some());
        assert_eq!(deadline_after(Some(Duration::MAX)), None);
    }
}
