//! Partitioned tables: partition specs and names, formed from partition-key values exactly as
//! Fluss forms them.
//!
//! A partitioned table lists its partition columns (`TableDescriptor::partition_keys`); each
//! distinct combination of their values is one partition with its own id and its own buckets.
//! A partition is named by its values, each converted to a string and joined with `$` in the
//! order of the partition keys: `2026-12-03`, `eu$2026-12-03`. The conversion is Fluss's (Java
//! `PartitionUtils.convertValueOfType` and `PartitionNameConverters`), so that fluss-writer, the
//! Java client and the server put the same row into the same partition:
//!
//! | type | name part | example |
//! |---|---|---|
//! | STRING | the string | `eu` |
//! | BOOLEAN | `true` / `false` | |
//! | TINYINT .. BIGINT | decimal | `-12` |
//! | FLOAT, DOUBLE | Java's `String.valueOf`, `.` replaced by `_`; `NaN`, `Inf`, `-Inf` | `1_5`, `1_0E10` |
//! | DATE | `yyyy-MM-dd` (proleptic Gregorian year, at least 4 digits) | `2026-12-03` |
//! | TIME | `HH-mm-ss_SSS` | `10-20-30_004` |
//! | TIMESTAMP, TIMESTAMP_LTZ (UTC) | `yyyy-MM-dd-HH-mm-ss_` + the fraction of the second without trailing zeros | `2026-12-03-10-20-30_`, `2026-12-03-10-20-30_5` |
//! | BYTES | lowercase hex | `00ff` |
//!
//! DECIMAL columns cannot be partition keys (the server refuses them). Every part must then be a
//! valid Fluss name: 1 to 200 ASCII letters, digits, `_` or `-`, not `.` or `..`, not starting
//! with `__`. A value that does not convert (NULL, a string with other characters, a timestamp
//! outside the years 1 to 9999) is refused synchronously with `INVALID_ROW` naming the column.

use std::fmt::Write as _;

use crate::error::{ClientCode, Error, Result};
use crate::row::{Timestamp, Value};

use super::{Column, DataType, Schema};

/// What joins the values of several partition keys in a partition name.
pub const PARTITION_SEPARATOR: char = '$';

/// The longest partition value (and database or table name) Fluss accepts.
pub const MAX_PARTITION_VALUE_LEN: usize = 200;

/// The system partition of a table with historical partitions (Fluss 1.0, FIP-28): the
/// coordinator creates it with the table, and rows of partitions that retention has dropped are
/// written there. No writer creates it; `list_partitions` does not list it.
pub const HISTORICAL_PARTITION: &str = "__historical__";

/// The table option that gives a table its [`HISTORICAL_PARTITION`] (Fluss 1.0; the server
/// allows it on auto-partitioned lake tables in Paimon with one partition key; the 1.0-SNAPSHOT
/// coordinator also wanted a primary key, the 1.0.0 client routes log tables too).
pub const HISTORICAL_ENABLED: &str = "table.datalake.historical-partition.enabled";

/// The auto-partitioning of a table whose rows for expired partitions go to its
/// [`HISTORICAL_PARTITION`]: `Some` when the descriptor turns [`HISTORICAL_ENABLED`] on and is
/// auto-partitioned, `None` otherwise.
pub fn historical_partitions(d: &super::TableDescriptor) -> Option<AutoPartition> {
    if !d.flag(HISTORICAL_ENABLED) {
        return None;
    }
    AutoPartition::from_descriptor(d).ok().flatten()
}

/// Whether the rows of partition `name` live in the table's [`HISTORICAL_PARTITION`] once
/// `name` is gone: the table has historical partitions and `name` has expired by now.
pub(crate) fn expired_to_historical(d: &super::TableDescriptor, name: &str) -> bool {
    historical_partitions(d).is_some_and(|a| a.is_expired(name, crate::timeouts::wall_clock_ms()))
}

/// One partition of a table, as `list_partitions` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionInfo {
    /// The server's id of the partition (a new id when a partition of the same name is
    /// recreated).
    pub partition_id: i64,
    /// The partition's name: its values joined by `$` in partition-key order.
    pub partition_name: String,
    /// The partition's values by key.
    pub spec: PartitionSpec,
}

/// Partition-key values by key name, as strings (the form Fluss's DDL requests carry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionSpec {
    entries: Vec<(String, String)>,
}

impl PartitionSpec {
    /// A spec from `(key, value)` pairs.
    pub fn new<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> PartitionSpec {
        PartitionSpec { entries: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    /// The `(key, value)` pairs in the order given.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// The value of `key`, if the spec has one.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The spec of the partition called `name` of a table partitioned by `keys`.
    pub fn from_name(keys: &[String], name: &str) -> Result<PartitionSpec> {
        let values: Vec<&str> = name.split(PARTITION_SEPARATOR).collect();
        if values.len() != keys.len() {
            return Err(Error::client(
                ClientCode::InvalidTable,
                format!("partition name {name:?} has {} values, the table has {} partition keys {keys:?}", values.len(), keys.len()),
            ));
        }
        Ok(PartitionSpec::new(keys.iter().cloned().zip(values.into_iter().map(str::to_string))))
    }

    /// The values in the order of `keys`, checked: the spec names exactly these keys, once
    /// each, and every value is a valid partition value. The error (`INVALID_TABLE`) names the
    /// key at fault.
    pub fn resolve(&self, keys: &[String]) -> Result<Vec<&str>> {
        let bad = |m: String| Error::client(ClientCode::InvalidTable, m);
        if keys.is_empty() {
            return Err(bad("the table is not partitioned".into()));
        }
        for (i, (k, _)) in self.entries.iter().enumerate() {
            if !keys.contains(k) {
                return Err(bad(format!("partition spec names {k:?}, which is not a partition key of the table (keys: {keys:?})")));
            }
            if self.entries[..i].iter().any(|(o, _)| o == k) {
                return Err(bad(format!("partition spec names {k:?} twice")));
            }
        }
        keys.iter()
            .map(|k| {
                let v = self.get(k).ok_or_else(|| bad(format!("partition spec has no value for partition key {k:?}")))?;
                check_partition_value(v).map_err(|why| bad(format!("partition key {k:?}: value {v:?} {why}")))?;
                Ok(v)
            })
            .collect()
    }

    /// The partition name for a table partitioned by `keys` (checked as by [`resolve`](Self::resolve)).
    pub fn name(&self, keys: &[String]) -> Result<String> {
        Ok(self.resolve(keys)?.join(&PARTITION_SEPARATOR.to_string()))
    }
}

/// Whether a column of this type may be a partition key (every type but DECIMAL).
pub fn is_partition_key_type(t: &DataType) -> bool {
    !matches!(t, DataType::Decimal { .. }) && !t.is_nested()
}

/// Why `value` is not a valid partition value (`None`: it is valid).
pub fn check_partition_value(value: &str) -> std::result::Result<(), String> {
    if value.is_empty() {
        return Err("is empty".into());
    }
    if value == "." || value == ".." {
        return Err("is not allowed".into());
    }
    if value.len() > MAX_PARTITION_VALUE_LEN {
        return Err(format!("is longer than {MAX_PARTITION_VALUE_LEN} characters"));
    }
    if let Some(c) = value.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(format!("contains {c:?}: only ASCII letters, digits, '_' and '-' are allowed"));
    }
    if value.starts_with("__") {
        return Err("starts with '__', which Fluss reserves for system partitions (such as __historical__)".into());
    }
    Ok(())
}

/// Append the partition-name form of `value`, a value of column `col`, to `out`. NULL and values
/// that do not form a valid name are `INVALID_ROW` naming the column.
pub fn format_partition_value(col: &Column, value: &Value, out: &mut String) -> Result<()> {
    let start = out.len();
    let bad = |why: String| Error::client(ClientCode::InvalidRow, format!("partition key column {:?}: {why}", col.name));
    match (&col.data_type, value) {
        (_, Value::Null) => return Err(bad("NULL cannot name a partition".into())),
        (DataType::String | DataType::Char { .. }, Value::String(s)) => out.push_str(s),
        (DataType::Boolean, Value::Boolean(b)) => out.push_str(if *b { "true" } else { "false" }),
        (DataType::TinyInt, Value::TinyInt(v)) => write!(out, "{v}").expect("String"),
        (DataType::SmallInt, Value::SmallInt(v)) => write!(out, "{v}").expect("String"),
        (DataType::Int, Value::Int(v)) => write!(out, "{v}").expect("String"),
        (DataType::BigInt, Value::BigInt(v)) => write!(out, "{v}").expect("String"),
        (DataType::Float, Value::Float(v)) => java_float(f64::from(*v), format!("{v:e}"), format!("{:.1e}", v.abs()), '_', out),
        (DataType::Double, Value::Double(v)) => java_float(*v, format!("{v:e}"), format!("{:.1e}", v.abs()), '_', out),
        (DataType::Date, Value::Date(d)) => {
            let (y, m, day) = civil_from_days(i64::from(*d));
            write!(out, "{y:04}-{m:02}-{day:02}").expect("String");
        }
        (DataType::Time { .. }, Value::Time(ms)) => {
            let ms = i64::from(*ms);
            let (h, rest) = (ms.div_euclid(3_600_000), ms.rem_euclid(3_600_000));
            write!(out, "{h:02}-{:02}-{:02}_{:03}", rest / 60_000, rest % 60_000 / 1000, rest % 1000).expect("String");
        }
        (DataType::Timestamp { .. }, Value::Timestamp(t)) | (DataType::TimestampLtz { .. }, Value::TimestampLtz(t)) => {
            timestamp_name(t, out).map_err(bad)?
        }
        (DataType::Bytes | DataType::Binary { .. }, Value::Bytes(b)) => {
            for x in b {
                write!(out, "{x:02x}").expect("String");
            }
        }
        (DataType::Decimal { .. }, _) => return Err(bad("DECIMAL columns cannot be partition keys".into())),
        (t, v) => return Err(bad(format!("value {v:?} does not match the column type {t}"))),
    }
    check_partition_value(&out[start..]).map_err(|why| bad(format!("partition value {:?} {why}", &out[start..])))
}

/// Java's `String.valueOf(float/double)` with `.` replaced by `point` (`_` in partition names,
/// with `Inf` for `Infinity`): plain notation with at least one fractional digit for magnitudes
/// in [1e-3, 1e7), otherwise `d.dddE<exp>`; the digits are the shortest that round-trip (`sci`
/// is Rust's `{:e}` form of the value, which has those; `two_digits` its `{:.1e}` form, for
/// values that one digit would name). This is the JDK 19+ algorithm; older JDKs print a longer
/// form for a few values.
pub(crate) fn java_float(v: f64, sci: String, two_digits: String, point: char, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(match (v > 0.0, point) {
            (true, '.') => "Infinity",
            (false, '.') => "-Infinity",
            (true, _) => "Inf",
            (false, _) => "-Inf",
        });
        return;
    }
    if v == 0.0 {
        if v.is_sign_negative() {
            out.push('-');
        }
        out.push('0');
        out.push(point);
        out.push('0');
        return;
    }
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    if neg {
        out.push('-');
    }
    let abs = v.abs();
    if (1e-3..1e7).contains(&abs) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let padded = format!("{digits:0<int_len$}");
            out.push_str(&padded[..int_len]);
            out.push(point);
            let frac = &padded[int_len..];
            out.push_str(if frac.is_empty() { "0" } else { frac });
        } else {
            out.push('0');
            out.push(point);
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        }
    } else {
        // At least two significant digits here (`d.d`): when one would do, Java prints the two
        // closest to the exact value (`4.9E-324`, not `5.0E-324`), which `{:.1e}` gives.
        let (digits, exp) = if digits.len() == 1 {
            let (m, e) = two_digits.split_once('e').expect("{:e} has an exponent");
            (m.replace('.', ""), e.parse::<i32>().expect("{:e} exponent"))
        } else {
            (digits, exp)
        };
        out.push_str(&digits[..1]);
        out.push(point);
        out.push_str(&digits[1..]);
        write!(out, "E{exp}").expect("String");
    }
}

/// `yyyy-MM-dd-HH-mm-ss_` and the fraction of the second without trailing zeros (none for a
/// whole second), in UTC.
fn timestamp_name(t: &Timestamp, out: &mut String) -> std::result::Result<(), String> {
    let days = t.millis.div_euclid(86_400_000);
    let ms_of_day = t.millis.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    if !(1..=9999).contains(&y) {
        return Err(format!("timestamp in year {y} cannot name a partition (years 1 to 9999)"));
    }
    let secs = ms_of_day / 1000;
    write!(out, "{y:04}-{m:02}-{d:02}-{:02}-{:02}-{:02}_", secs / 3600, secs % 3600 / 60, secs % 60).expect("String");
    let nanos = (ms_of_day % 1000) as u32 * 1_000_000 + t.nanos_of_milli;
    if nanos > 0 {
        let s = format!("{nanos:09}");
        out.push_str(s.trim_end_matches('0'));
    }
    Ok(())
}

/// (year, month, day) of a day count since 1970-01-01 in the proleptic Gregorian calendar.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The unit of time an auto-partitioned table is partitioned by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// One partition per year: `yyyy`.
    Year,
    /// One partition per quarter: `yyyyQ` (`20264` for the fourth quarter of 2026).
    Quarter,
    /// One partition per month: `yyyyMM`.
    Month,
    /// One partition per day: `yyyyMMdd` (the default).
    Day,
    /// One partition per hour: `yyyyMMddHH`.
    Hour,
}

/// A table's `table.auto-partition.*` properties, checked as the Fluss server checks them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoPartition {
    /// The partition key whose values are times (`table.auto-partition.key`; the only key when
    /// there is one).
    pub key: String,
    /// `table.auto-partition.time-unit` (default DAY).
    pub time_unit: TimeUnit,
    /// `table.auto-partition.num-precreate` (default 2): partitions created ahead, the current
    /// one included.
    pub num_precreate: i32,
    /// `table.auto-partition.num-retention` (default 7): past partitions kept.
    pub num_retention: i32,
    /// `table.auto-partition.time-zone` (default: the server's zone).
    pub time_zone: Option<String>,
    /// `table.auto-partition.time-format` (Fluss 1.0; default: the time unit's own format).
    pub time_format: Option<TimeFormat>,
}

impl AutoPartition {
    /// Property names.
    pub const ENABLED: &'static str = "table.auto-partition.enabled";
    /// See [`AutoPartition::key`].
    pub const KEY: &'static str = "table.auto-partition.key";
    /// See [`AutoPartition::time_unit`].
    pub const TIME_UNIT: &'static str = "table.auto-partition.time-unit";
    /// See [`AutoPartition::num_precreate`].
    pub const NUM_PRECREATE: &'static str = "table.auto-partition.num-precreate";
    /// See [`AutoPartition::num_retention`].
    pub const NUM_RETENTION: &'static str = "table.auto-partition.num-retention";
    /// See [`AutoPartition::time_zone`].
    pub const TIME_ZONE: &'static str = "table.auto-partition.time-zone";
    /// See [`AutoPartition::time_format`].
    pub const TIME_FORMAT: &'static str = "table.auto-partition.time-format";

    /// The auto-partitioning of a descriptor (`None`: not enabled). Errors as the server gives
    /// them: auto-partitioning of a table without partition keys is `INVALID_CONFIG`, the other
    /// rules `INVALID_TABLE`.
    pub fn from_descriptor(d: &super::TableDescriptor) -> Result<Option<AutoPartition>> {
        let props = &d.properties;
        let bad = |m: String| Error::client(ClientCode::InvalidTable, m);
        let enabled = match props.get(Self::ENABLED).map(|v| v.trim().to_ascii_lowercase()) {
            None => false,
            Some(v) if v == "true" => true,
            Some(v) if v == "false" => false,
            Some(v) => return Err(Error::client(ClientCode::InvalidConfig, format!("{} = {v:?} is not true or false", Self::ENABLED))),
        };
        let time_unit = match props.get(Self::TIME_UNIT).map(|v| v.trim().to_ascii_uppercase()).as_deref() {
            None | Some("DAY") => TimeUnit::Day,
            Some("YEAR") => TimeUnit::Year,
            Some("QUARTER") => TimeUnit::Quarter,
            Some("MONTH") => TimeUnit::Month,
            Some("HOUR") => TimeUnit::Hour,
            Some(v) => {
                return Err(Error::client(
                    ClientCode::InvalidConfig,
                    format!("{} = {v:?} is not one of YEAR, QUARTER, MONTH, DAY, HOUR", Self::TIME_UNIT),
                ))
            }
        };
        // A partitioned table's explicit time format is checked whether or not it is
        // auto-partitioned, as the Fluss 1.0 coordinator checks it at CreateTable.
        let time_format = match props.get(Self::TIME_FORMAT) {
            Some(f) if !d.partition_keys.is_empty() => {
                Some(TimeFormat::new(f, time_unit).map_err(|why| bad(format!("Invalid table property '{}': {why}", Self::TIME_FORMAT)))?)
            }
            _ => None,
        };
        if !enabled {
            return Ok(None);
        }
        let keys = &d.partition_keys;
        if keys.is_empty() {
            return Err(Error::client(
                ClientCode::InvalidConfig,
                format!("auto-partitioning needs partition keys: set {} to false or give the table partition keys", Self::ENABLED),
            ));
        }
        let int = |k: &str, default: i32| -> Result<i32> {
            match props.get(k) {
                None => Ok(default),
                Some(v) => {
                    v.trim().parse::<i32>().map_err(|_| Error::client(ClientCode::InvalidConfig, format!("{k} = {v:?} is not an integer")))
                }
            }
        };
        let num_precreate = int(Self::NUM_PRECREATE, 2)?;
        let num_retention = int(Self::NUM_RETENTION, 7)?;
        let key = match props.get(Self::KEY).map(|k| k.trim()).filter(|k| !k.is_empty()) {
            Some(k) if keys.iter().any(|p| p == k) => k.to_string(),
            Some(k) => return Err(bad(format!("{} = {k:?} is not one of the partition keys {keys:?}", Self::KEY))),
            None if keys.len() == 1 => keys[0].clone(),
            None => return Err(bad(format!("an auto-partitioned table with several partition keys must name one in {}", Self::KEY))),
        };
        if keys.len() > 1 && num_precreate > 0 {
            return Err(bad(format!(
                "an auto-partitioned table with several partition keys cannot pre-create partitions: set {} to 0, not {num_precreate}",
                Self::NUM_PRECREATE
            )));
        }
        Ok(Some(AutoPartition {
            key,
            time_unit,
            num_precreate,
            num_retention,
            time_zone: props.get(Self::TIME_ZONE).cloned(),
            time_format,
        }))
    }
}

impl AutoPartition {
    /// The names of the `count` partitions starting `from` units after the one that holds
    /// `now_ms` (0: the current one), in the table's time zone, as the server's auto-partitioning
    /// names them: by the table's `table.auto-partition.time-format`, or else `yyyy`, `yyyyQ`,
    /// `yyyyMM`, `yyyyMMdd` or `yyyyMMddHH`.
    pub fn names_from(&self, now_ms: i64, from: i32, count: i32) -> Result<Vec<String>> {
        let bad = |m: String| Error::client(ClientCode::InvalidTable, m);
        let tz = time_zone(self.time_zone.as_deref());
        let now = jiff::Timestamp::from_millisecond(now_ms).map_err(|e| bad(format!("time {now_ms} ms: {e}")))?.to_zoned(tz);
        (from..from.saturating_add(count.max(0)))
            .map(|k| {
                let k = i64::from(k);
                let span = match self.time_unit {
                    TimeUnit::Year => jiff::Span::new().try_years(k),
                    TimeUnit::Quarter => jiff::Span::new().try_months(k * 3),
                    TimeUnit::Month => jiff::Span::new().try_months(k),
                    TimeUnit::Day => jiff::Span::new().try_days(k),
                    TimeUnit::Hour => jiff::Span::new().try_hours(k),
                }
                .map_err(|e| bad(format!("auto-partition offset {k}: {e}")))?;
                let t = now.checked_add(span).map_err(|e| bad(format!("auto-partition offset {k}: {e}")))?;
                let (y, m, d, h) = (t.year(), t.month(), t.day(), t.hour());
                if let Some(f) = &self.time_format {
                    return Ok(f.format(i64::from(y), m as u32, d as u32, h as u32));
                }
                Ok(match self.time_unit {
                    TimeUnit::Year => format!("{y:04}"),
                    TimeUnit::Quarter => format!("{y:04}{}", (m - 1) / 3 + 1),
                    TimeUnit::Month => format!("{y:04}{m:02}"),
                    TimeUnit::Day => format!("{y:04}{m:02}{d:02}"),
                    TimeUnit::Hour => format!("{y:04}{m:02}{d:02}{h:02}"),
                })
            })
            .collect()
    }
}

impl AutoPartition {
    /// Whether `value`, the auto-partition key's value of a partition to create, is one the
    /// Fluss 1.0 coordinator (and the 1.0 Java client before creating a partition on write)
    /// accepts: it must read as a time in the table's format and must not be older than the
    /// oldest partition the table retains, `num_retention` units before the one holding
    /// `now_ms` ("out-of-date"). Names compare as strings, as the server compares them. The
    /// error is the server's message (its code: PARTITION_SPEC_INVALID_EXCEPTION).
    pub fn check_value(&self, value: &str, now_ms: i64) -> std::result::Result<(), String> {
        let bad = |m: String| m;
        let format = self.format_pattern();
        let parses = match &self.time_format {
            Some(f) => f.parses(value),
            None => TimeFormat::new(&format, self.time_unit).map(|f| f.parses(value)).unwrap_or(false),
        };
        if !parses {
            return Err(bad(format!(
                "Partition value '{value}' does not match the expected format '{format}' for auto-partition time unit '{}'.",
                self.time_unit.name()
            )));
        }
        let oldest = self.names_from(now_ms, self.num_retention.saturating_neg(), 1).map_err(|e| e.message().to_string())?.remove(0);
        if oldest.as_str() > value {
            return Err(bad(format!("Partition value '{value}' is out-of-date. The earliest retained partition is '{oldest}'.")));
        }
        Ok(())
    }

    /// Whether the partition called `name` is older than the oldest one the table retains,
    /// `num_retention` units before the one holding `now_ms` (names compare as strings, as the
    /// Fluss 1.0 Java client compares them before it routes a row to the historical partition);
    /// never with a negative retention.
    pub fn is_expired(&self, name: &str, now_ms: i64) -> bool {
        if self.num_retention < 0 {
            return false;
        }
        match self.names_from(now_ms, self.num_retention.saturating_neg(), 1) {
            Ok(oldest) => oldest.first().is_some_and(|oldest| name < oldest.as_str()),
            Err(_) => false,
        }
    }

    /// The pattern partition names follow: the table's time format, or the time unit's.
    pub fn format_pattern(&self) -> String {
        match &self.time_format {
            Some(f) => f.pattern.clone(),
            None => self.time_unit.default_format().to_string(),
        }
    }
}

impl TimeUnit {
    /// The unit as the table property names it.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Year => "YEAR",
            TimeUnit::Quarter => "QUARTER",
            TimeUnit::Month => "MONTH",
            TimeUnit::Day => "DAY",
            TimeUnit::Hour => "HOUR",
        }
    }

    /// The format of partition names without `table.auto-partition.time-format`.
    pub fn default_format(self) -> &'static str {
        match self {
            TimeUnit::Year => "yyyy",
            TimeUnit::Quarter => "yyyyQ",
            TimeUnit::Month => "yyyyMM",
            TimeUnit::Day => "yyyyMMdd",
            TimeUnit::Hour => "yyyyMMddHH",
        }
    }

    /// The fields a format of this unit has, in order.
    fn fields(self) -> &'static [TimeField] {
        use TimeField::*;
        match self {
            TimeUnit::Year => &[Year],
            TimeUnit::Quarter => &[Year, Quarter],
            TimeUnit::Month => &[Year, Month],
            TimeUnit::Day => &[Year, Month, Day],
            TimeUnit::Hour => &[Year, Month, Day, Hour],
        }
    }
}

/// A field of a partition time format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeField {
    Year,
    Quarter,
    Month,
    Day,
    Hour,
}

impl TimeField {
    fn name(self) -> &'static str {
        match self {
            TimeField::Year => "year",
            TimeField::Quarter => "quarter",
            TimeField::Month => "month",
            TimeField::Day => "day",
            TimeField::Hour => "hour",
        }
    }

    fn width(self) -> usize {
        match self {
            TimeField::Year => 4,
            TimeField::Quarter => 1,
            _ => 2,
        }
    }
}

/// One part of a time format: literal text, or a field with its pattern letter.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FormatPart {
    Literal(String),
    Field(TimeField, char),
}

/// A `table.auto-partition.time-format` (Fluss 1.0), checked as the coordinator checks it at
/// CreateTable (`PartitionUtils.validateTimeFormat`): a Java `DateTimeFormatter` pattern whose
/// fields are exactly the time unit's, in order (year `yyyy` / `uuuu`, quarter `Q` / `q`,
/// month `MM` / `LL`, day `dd`, hour `HH`), with literal text between them (quoted with `'`, or
/// any character other than a letter and `[ ] { } #`), and whose names are valid partition
/// values (checked on 2024-11-11 11:00, as the server checks them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeFormat {
    pattern: String,
    parts: Vec<FormatPart>,
}

impl TimeFormat {
    /// Parse and check `pattern` for `unit`; the error says why, as the server's does.
    pub fn new(pattern: &str, unit: TimeUnit) -> std::result::Result<TimeFormat, String> {
        let invalid = |why: &str| format!("Invalid date-time format pattern '{pattern}': {why}.");
        let chars: Vec<char> = pattern.chars().collect();
        let mut parts: Vec<FormatPart> = Vec::new();
        let literal = |parts: &mut Vec<FormatPart>, c: char| match parts.last_mut() {
            Some(FormatPart::Literal(s)) => s.push(c),
            _ => parts.push(FormatPart::Literal(c.to_string())),
        };
        let mut optional = false;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                if chars.get(i + 1) == Some(&'\'') {
                    literal(&mut parts, '\'');
                    i += 2;
                    continue;
                }
                // A quoted literal up to the next lone quote ('' inside is one quote).
                i += 1;
                loop {
                    match (chars.get(i), chars.get(i + 1)) {
                        (None, _) => return Err(invalid("the pattern ends with an incomplete string literal")),
                        (Some('\''), Some('\'')) => {
                            literal(&mut parts, '\'');
                            i += 2;
                        }
                        (Some('\''), _) => {
                            i += 1;
                            break;
                        }
                        (Some(&c), _) => {
                            literal(&mut parts, c);
                            i += 1;
                        }
                    }
                }
                continue;
            }
            if matches!(c, '{' | '}' | '#') {
                return Err(invalid(&format!("the pattern includes the reserved character '{c}'")));
            }
            if c == '[' || c == ']' {
                optional = true;
                i += 1;
                continue;
            }
            if !c.is_ascii_alphabetic() {
                literal(&mut parts, c);
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < chars.len() && chars[end] == c {
                end += 1;
            }
            let field = match c {
                'y' | 'u' => TimeField::Year,
                'Q' | 'q' => TimeField::Quarter,
                'M' | 'L' => TimeField::Month,
                'd' => TimeField::Day,
                'H' => TimeField::Hour,
                _ => return Err(format!("Time format '{pattern}' contains unsupported time field '{c}'.")),
            };
            if end - i != field.width() {
                return Err(format!(
                    "Time field '{}' in format '{pattern}' must have fixed width {}, but found {}.",
                    field.name(),
                    field.width(),
                    end - i
                ));
            }
            parts.push(FormatPart::Field(field, c));
            i = end;
        }
        if optional {
            return Err(format!("Time format '{pattern}' must not contain optional sections ('[' or ']')."));
        }
        let fields: Vec<TimeField> = parts
            .iter()
            .filter_map(|p| match p {
                FormatPart::Field(f, _) => Some(*f),
                FormatPart::Literal(_) => None,
            })
            .collect();
        if fields != unit.fields() {
            let names = |fs: &[TimeField]| format!("[{}]", fs.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "));
            return Err(format!(
                "Time format '{pattern}' must contain fields {} in this order for time unit '{}', but found {}.",
                names(unit.fields()),
                unit.name(),
                names(&fields)
            ));
        }
        let format = TimeFormat { pattern: pattern.to_string(), parts };
        // The server formats 2024-11-11 11:00 (in the table's zone: the fields are these).
        let sample = format.format(2024, 11, 11, 11);
        check_partition_value(&sample)
            .map_err(|why| format!("Time format '{pattern}' generates invalid partition value '{sample}': the value {why}."))?;
        Ok(format)
    }

    /// The pattern as the table property gives it.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The name of the partition holding this local time (proleptic year, month 1-12, day,
    /// hour 0-23), as Java's `DateTimeFormatter` prints it.
    pub fn format(&self, year: i64, month: u32, day: u32, hour: u32) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                FormatPart::Literal(s) => out.push_str(s),
                FormatPart::Field(TimeField::Year, letter) => {
                    // `yyyy` is the year of era (1 BC is 1), `uuuu` the proleptic year; four
                    // digits at least, a sign beyond them.
                    let y = if *letter == 'y' && year < 1 { 1 - year } else { year };
                    if y > 9999 {
                        write!(out, "+{y}").expect("String");
                    } else if y < 0 {
                        write!(out, "-{:04}", -y).expect("String");
                    } else {
                        write!(out, "{y:04}").expect("String");
                    }
                }
                FormatPart::Field(TimeField::Quarter, _) => write!(out, "{}", (month - 1) / 3 + 1).expect("String"),
                FormatPart::Field(TimeField::Month, _) => write!(out, "{month:02}").expect("String"),
                FormatPart::Field(TimeField::Day, _) => write!(out, "{day:02}").expect("String"),
                FormatPart::Field(TimeField::Hour, _) => write!(out, "{hour:02}").expect("String"),
            }
        }
        out
    }

    /// Whether `value` reads as a time in this format, as Java's
    /// `DateTimeFormatter.ofPattern(pattern).parse(value)` reads it (smart resolving; checked
    /// against the 1.0.0 jar): the literals as they are, each field its exact width of ASCII
    /// digits (the quarter: 1 to 19 digits, any number), the year of era (`y`) from 1 (`u`:
    /// from 0), day 1-31 (a day past
    /// the month's end is taken as its last day) with month 1-12 (a format without a day
    /// leaves the month unchecked: `202613` is a MONTH value), hour 0-24 (24 is the next
    /// day's midnight). A quarter right after the year (`yyyyQ`, the QUARTER unit's default)
    /// never reads: Java's year then takes the quarter's digit too, so the 1.0 coordinator
    /// refuses every such value (a quarterly table needs a format with text between them, e.g.
    /// `yyyy'Q'Q`, to create partitions other than by auto-partitioning).
    pub fn parses(&self, value: &str) -> bool {
        let has_day = self.parts.iter().any(|p| matches!(p, FormatPart::Field(TimeField::Day, _)));
        if self.parts.windows(2).any(|w| matches!(w, [FormatPart::Field(TimeField::Year, _), FormatPart::Field(TimeField::Quarter, _)])) {
            return false;
        }
        let mut rest = value;
        for p in &self.parts {
            match p {
                FormatPart::Literal(s) => match rest.strip_prefix(s.as_str()) {
                    Some(r) => rest = r,
                    None => return false,
                },
                FormatPart::Field(TimeField::Quarter, _) => {
                    // Java reads the quarter as 1 to 19 digits and leaves its value unchecked.
                    let n = rest.bytes().take(19).take_while(u8::is_ascii_digit).count();
                    if n == 0 {
                        return false;
                    }
                    rest = &rest[n..];
                }
                FormatPart::Field(f, letter) => {
                    let w = f.width();
                    if rest.len() < w || !rest.as_bytes()[..w].iter().all(u8::is_ascii_digit) {
                        return false;
                    }
                    let v: u32 = rest[..w].parse().expect("digits");
                    rest = &rest[w..];
                    let ok = match f {
                        TimeField::Year => *letter == 'u' || v >= 1,
                        TimeField::Quarter => true,
                        TimeField::Month => !has_day || (1..=12).contains(&v),
                        TimeField::Day => (1..=31).contains(&v),
                        TimeField::Hour => v <= 24,
                    };
                    if !ok {
                        return false;
                    }
                }
            }
        }
        rest.is_empty()
    }
}

/// The time zone of `table.auto-partition.time-zone` as Java's `TimeZone.getTimeZone` reads it:
/// an IANA name (`Asia/Shanghai`, `UTC`), or `GMT+8` / `GMT-05:30`; anything else is GMT (as on
/// the server, which does not refuse it). No value: this process's zone (the server's default is
/// its own).
fn time_zone(id: Option<&str>) -> jiff::tz::TimeZone {
    let Some(id) = id.map(str::trim) else { return jiff::tz::TimeZone::system() };
    if let Some(rest) = id.strip_prefix("GMT").filter(|r| !r.is_empty()) {
        let (sign, rest) = match rest.as_bytes()[0] {
            b'+' => (1, &rest[1..]),
            b'-' => (-1, &rest[1..]),
            _ => (0, rest),
        };
        let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
        if let (1, Ok(h), Ok(m)) | (-1, Ok(h), Ok(m)) = (sign, h.parse::<i32>(), m.parse::<i32>()) {
            if (0..=23).contains(&h) && (0..=59).contains(&m) {
                if let Ok(off) = jiff::tz::Offset::from_seconds(sign * (h * 3600 + m * 60)) {
                    return jiff::tz::TimeZone::fixed(off);
                }
            }
        }
    }
    jiff::tz::TimeZone::get(id).unwrap_or_else(|_| {
        log::warn!("table.auto-partition.time-zone {id:?} is not a known time zone: using GMT, as the Fluss server does");
        jiff::tz::TimeZone::UTC
    })
}

/// Routes rows of a partitioned table to partition names.
#[derive(Clone, Debug)]
pub struct PartitionRouter {
    /// Column indexes of the partition keys, in key order.
    cols: Vec<usize>,
}

impl PartitionRouter {
    /// The router of a table partitioned by `keys` (`None` for a table without partition keys).
    pub fn new(schema: &Schema, keys: &[String]) -> Result<Option<PartitionRouter>> {
        if keys.is_empty() {
            return Ok(None);
        }
        let cols = keys
            .iter()
            .map(|k| {
                schema
                    .index_of(k)
                    .ok_or_else(|| Error::client(ClientCode::InvalidTable, format!("partition key column {k:?} is not in the schema")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(PartitionRouter { cols }))
    }

    /// Column indexes of the partition keys.
    pub fn columns(&self) -> &[usize] {
        &self.cols
    }

    /// Write the partition name of `row` (already checked against the schema) into `out`.
    pub fn name_of(&self, schema: &Schema, row: &[Value], out: &mut String) -> Result<()> {
        out.clear();
        for (i, &c) in self.cols.iter().enumerate() {
            if i > 0 {
                out.push(PARTITION_SEPARATOR);
            }
            format_partition_value(&schema.columns()[c], &row[c], out)?;
        }
        Ok(())
    }
}

/// Split the full primary key of a partitioned table (`key`: every primary-key column in key
/// order) into its partition name and its physical key (the other key columns, in key order).
pub(crate) fn split_partitioned_key(info: &super::TableInfo, key: &[Value]) -> Result<(String, Vec<Value>)> {
    let schema = info.schema();
    let pk = schema.primary_key();
    if key.len() != pk.len() {
        return Err(Error::invalid_row(format!(
            "table {} has {} primary-key columns but {} key values were given",
            info.path,
            pk.len(),
            key.len()
        )));
    }
    let mut name = String::new();
    for (i, k) in info.partition_keys().iter().enumerate() {
        if i > 0 {
            name.push(PARTITION_SEPARATOR);
        }
        let at = pk.iter().position(|p| p == k).expect("partition keys are in the primary key");
        let col = &schema.columns()[schema.index_of(k).expect("validated")];
        format_partition_value(col, &key[at], &mut name)?;
    }
    let physical = pk.iter().zip(key).filter(|(k, _)| !info.partition_keys().contains(k)).map(|(_, v)| v.clone()).collect();
    Ok((name, physical))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(t: DataType, v: Value) -> Result<String> {
        let mut s = String::new();
        format_partition_value(&Column::new("k", t), &v, &mut s).map(|_| s)
    }

    #[test]
    fn values_format_as_fluss_names() {
        assert_eq!(name(DataType::String, Value::String("eu-west_1".into())).unwrap(), "eu-west_1");
        assert_eq!(name(DataType::Boolean, Value::Boolean(true)).unwrap(), "true");
        assert_eq!(name(DataType::BigInt, Value::BigInt(-42)).unwrap(), "-42");
        assert_eq!(name(DataType::Date, Value::Date(0)).unwrap(), "1970-01-01");
        assert_eq!(name(DataType::Date, Value::Date(20_425)).unwrap(), "2025-12-03");
        assert_eq!(name(DataType::Date, Value::Date(-1)).unwrap(), "1969-12-31");
        assert_eq!(name(DataType::Time { precision: 3 }, Value::Time(37_230_004)).unwrap(), "10-20-30_004");
        let ts = |ms, n| Value::Timestamp(Timestamp { millis: ms, nanos_of_milli: n });
        assert_eq!(name(DataType::Timestamp { precision: 6 }, ts(0, 0)).unwrap(), "1970-01-01-00-00-00_");
        assert_eq!(name(DataType::Timestamp { precision: 6 }, ts(1_500, 0)).unwrap(), "1970-01-01-00-00-01_5");
        assert_eq!(name(DataType::Timestamp { precision: 9 }, ts(1_000, 1)).unwrap(), "1970-01-01-00-00-01_000000001");
        assert_eq!(name(DataType::Timestamp { precision: 3 }, ts(-1, 0)).unwrap(), "1969-12-31-23-59-59_999");
        assert_eq!(name(DataType::Bytes, Value::Bytes(vec![0, 15, 255])).unwrap(), "000fff");
    }

    #[test]
    fn floats_format_as_java_does() {
        let f = |v: f64| name(DataType::Double, Value::Double(v)).unwrap();
        assert_eq!(f(1.5), "1_5");
        assert_eq!(f(100.0), "100_0");
        assert_eq!(f(-0.25), "-0_25");
        assert_eq!(f(0.001), "0_001");
        assert_eq!(f(0.0001), "1_0E-4");
        assert_eq!(f(1e7), "1_0E7");
        assert_eq!(f(1.234e10), "1_234E10");
        assert_eq!(f(9999999.0), "9999999_0");
        assert_eq!(f(0.0), "0_0");
        assert_eq!(f(-0.0), "-0_0");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::NEG_INFINITY), "-Inf");
        assert_eq!(name(DataType::Float, Value::Float(0.1)).unwrap(), "0_1");
        assert_eq!(name(DataType::Float, Value::Float(1.1e-5)).unwrap(), "1_1E-5");
        assert_eq!(f(5e-324), "4_9E-324");
        assert_eq!(name(DataType::Float, Value::Float(f32::from_bits(1))).unwrap(), "1_4E-45");
    }

    #[test]
    fn bad_values_name_the_column() {
        for (t, v) in [
            (DataType::String, Value::Null),
            (DataType::String, Value::String("a b".into())),
            (DataType::String, Value::String(String::new())),
            (DataType::String, Value::String("__x".into())),
            (DataType::String, Value::String("x".repeat(201))),
            (DataType::Bytes, Value::Bytes(vec![])),
            (DataType::Timestamp { precision: 3 }, Value::Timestamp(Timestamp::from_millis(-62_135_596_800_001))),
            (DataType::Decimal { precision: 5, scale: 2 }, Value::Null),
            (DataType::Int, Value::BigInt(1)),
        ] {
            let e = name(t.clone(), v.clone()).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidRow as i32, "{t} {v:?}: {e}");
            assert!(e.message().contains("\"k\""), "{e}");
        }
    }

    #[test]
    fn auto_partition_names_follow_the_time_unit_and_zone() {
        let d = |unit: &str, zone: &str| {
            let schema = Schema::new(vec![Column::new("dt", DataType::String), Column::new("v", DataType::Int)], vec![]).unwrap();
            let desc = super::super::TableDescriptor::new(schema)
                .with_partition_keys(["dt"])
                .with_property(AutoPartition::ENABLED, "true")
                .with_property(AutoPartition::TIME_UNIT, unit)
                .with_property(AutoPartition::TIME_ZONE, zone);
            AutoPartition::from_descriptor(&desc).unwrap().unwrap()
        };
        // 2026-12-31T23:30:00Z
        let now = 1_798_759_800_000;
        assert_eq!(d("DAY", "UTC").names_from(now, 0, 2).unwrap(), ["20261231", "20270101"]);
        assert_eq!(d("DAY", "Asia/Shanghai").names_from(now, 0, 1).unwrap(), ["20270101"]);
        assert_eq!(d("HOUR", "GMT-01:00").names_from(now, 0, 2).unwrap(), ["2026123122", "2026123123"]);
        assert_eq!(d("QUARTER", "UTC").names_from(now, 0, 2).unwrap(), ["20264", "20271"]);
        assert_eq!(d("MONTH", "UTC").names_from(now, -1, 2).unwrap(), ["202611", "202612"]);
        assert_eq!(d("YEAR", "Nowhere/Else").names_from(now, 0, 1).unwrap(), ["2026"]);
    }

    #[test]
    fn historical_partitions_route_names_older_than_the_retained_ones() {
        let schema = Schema::new(vec![Column::new("dt", DataType::String), Column::new("v", DataType::Int)], vec![]).unwrap();
        let base = super::super::TableDescriptor::new(schema).with_partition_keys(["dt"]);
        let auto = base.clone().with_property(AutoPartition::ENABLED, "true").with_property(AutoPartition::TIME_ZONE, "UTC");
        // Without the option, or without auto-partitioning: no historical partition.
        assert_eq!(historical_partitions(&auto), None);
        assert_eq!(historical_partitions(&base.clone().with_property(HISTORICAL_ENABLED, "true")), None);
        let h = historical_partitions(&auto.clone().with_property(HISTORICAL_ENABLED, " TRUE ")).unwrap();
        // 2026-12-31T23:30:00Z, 7 days retained: 20261224 is the oldest partition kept.
        let now = 1_798_759_800_000;
        assert!(h.is_expired("20261223", now));
        assert!(h.is_expired("20200101", now));
        assert!(!h.is_expired("20261224", now));
        assert!(!h.is_expired("20270101", now));
        // Names compare as strings, as the Java client compares them.
        assert!(h.is_expired("2026122", now));
        let keep_all =
            historical_partitions(&auto.with_property(HISTORICAL_ENABLED, "true").with_property(AutoPartition::NUM_RETENTION, "-1"))
                .unwrap();
        assert!(!keep_all.is_expired("20200101", now));
    }

    #[test]
    fn time_formats_name_partitions_and_refuse_what_the_server_refuses() {
        let d = |unit: &str, format: &str| {
            let schema = Schema::builder().column("p", DataType::String).build().unwrap();
            super::super::TableDescriptor::new(schema)
                .with_partition_keys(["p"])
                .with_property(AutoPartition::ENABLED, "true")
                .with_property(AutoPartition::TIME_UNIT, unit)
                .with_property(AutoPartition::TIME_ZONE, "UTC")
                .with_property(AutoPartition::TIME_FORMAT, format)
        };
        let now = 1_798_675_200_000; // 2026-12-31T00:00:00Z
        let names = |unit, format| AutoPartition::from_descriptor(&d(unit, format)).unwrap().unwrap().names_from(now, 0, 2).unwrap();
        assert_eq!(names("DAY", "yyyy-MM-dd"), ["2026-12-31", "2027-01-01"]);
        assert_eq!(names("DAY", "uuuu_LL_dd"), ["2026_12_31", "2027_01_01"]);
        assert_eq!(names("HOUR", "yyyy-MM-dd'T'HH"), ["2026-12-31T00", "2026-12-31T01"]);
        assert_eq!(names("QUARTER", "yyyy-'Q'Q"), ["2026-Q4", "2027-Q1"]);
        assert_eq!(names("MONTH", "yyyy-MM"), ["2026-12", "2027-01"]);
        assert_eq!(names("YEAR", "'y'yyyy"), ["y2026", "y2027"]);
        for (unit, format, why) in [
            ("DAY", "yyyy/MM/dd", "invalid partition value '2024/11/11'"),
            ("DAY", "yyyy-MM", "must contain fields [year, month, day]"),
            ("DAY", "ddMMyyyy", "in this order"),
            ("DAY", "yyyy-MM-d", "fixed width 2"),
            ("HOUR", "yyyyMMddhh", "unsupported time field 'h'"),
            ("YEAR", "[yyyy]", "optional sections"),
            ("YEAR", "yyyy#", "reserved character"),
            ("YEAR", "yyyy'", "incomplete string literal"),
            ("YEAR", "'__'yyyy", "starts with '__'"),
        ] {
            let e = AutoPartition::from_descriptor(&d(unit, format)).unwrap_err();
            assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{format}");
            assert!(e.message().contains(AutoPartition::TIME_FORMAT) && e.message().contains(why), "{format}: {e}");
        }
        let a = AutoPartition::from_descriptor(&d("DAY", "yyyy-MM-dd")).unwrap().unwrap();
        assert_eq!(a.check_value("2026-12-30", now), Ok(()));
        assert_eq!(a.check_value("2027-02-30", now), Ok(()), "a day past the month's end reads as its last day");
        assert!(a.check_value("20261230", now).unwrap_err().contains("does not match the expected format 'yyyy-MM-dd'"));
        assert!(a.check_value("2026-13-01", now).unwrap_err().contains("does not match"));
        assert!(a.check_value("2026-12-23", now).unwrap_err().contains("out-of-date. The earliest retained partition is '2026-12-24'"));
        let q = AutoPartition::from_descriptor(&d("QUARTER", "yyyyQ")).unwrap().unwrap();
        assert!(q.check_value("20271", now).is_err(), "Java never reads a quarter right after the year");
        let m = AutoPartition::from_descriptor(&d("MONTH", "yyyyMM")).unwrap().unwrap();
        assert_eq!(m.check_value("202713", now), Ok(()), "without a day Java leaves the month unchecked");
    }

    #[test]
    fn specs_resolve_in_key_order() {
        let keys = vec!["region".to_string(), "dt".to_string()];
        let spec = PartitionSpec::new([("dt", "2026-12-03"), ("region", "eu")]);
        assert_eq!(spec.name(&keys).unwrap(), "eu$2026-12-03");
        assert_eq!(PartitionSpec::from_name(&keys, "eu$2026-12-03").unwrap().get("dt"), Some("2026-12-03"));
        for bad in [
            PartitionSpec::new([("dt", "2026-12-03")]),
            PartitionSpec::new([("dt", "2026-12-03"), ("region", "eu"), ("x", "1")]),
            PartitionSpec::new([("dt", "2026/12/03"), ("region", "eu")]),
            PartitionSpec::new([("dt", "a"), ("dt", "b")]),
        ] {
            assert_eq!(bad.name(&keys).unwrap_err().code(), ClientCode::InvalidTable as i32, "{bad:?}");
        }
    }
}
