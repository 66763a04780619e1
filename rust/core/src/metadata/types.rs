//! Data types, columns, schemas, descriptors and table paths.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{ClientCode, Error, Result};

/// A Fluss data type, without nullability (nullability lives on [`Column`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// BOOLEAN.
    Boolean,
    /// TINYINT (8 bits).
    TinyInt,
    /// SMALLINT (16 bits).
    SmallInt,
    /// INT (32 bits).
    Int,
    /// BIGINT (64 bits).
    BigInt,
    /// FLOAT (32-bit IEEE 754).
    Float,
    /// DOUBLE (64-bit IEEE 754).
    Double,
    /// STRING (UTF-8).
    String,
    /// BYTES (variable length).
    Bytes,
    /// CHAR(length): a string of at most `length` characters (Unicode code points); values are
    /// strings, stored like STRING and not padded (as Fluss 0.9.1's Java client stores them). A
    /// longer value is `INVALID_ROW` (the Java client stores it; fluss-writer does not).
    Char {
        /// Declared length, 1..=2147483647.
        length: u32,
    },
    /// BINARY(length): exactly `length` bytes (log tables carry it as Arrow FixedSizeBinary).
    Binary {
        /// Declared length, 1..=2147483647.
        length: u32,
    },
    /// DECIMAL(precision, scale), precision 1..=38, scale 0..=precision.
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point, 0..=precision.
        scale: u8,
    },
    /// Days since 1970-01-01.
    Date,
    /// Time of day; values are milliseconds of the day. Precision 0..=9 (default 0).
    Time {
        /// Fractional-second digits, 0..=9.
        precision: u8,
    },
    /// Timestamp without time zone; precision 0..=9 (default 6).
    Timestamp {
        /// Fractional-second digits, 0..=9.
        precision: u8,
    },
    /// Timestamp with local time zone (an instant); precision 0..=9 (default 6).
    TimestampLtz {
        /// Fractional-second digits, 0..=9.
        precision: u8,
    },
    /// `ARRAY<element>`. Tables with ARRAY, MAP or ROW columns can be created and described;
    /// writers and reads refuse them (`UNSUPPORTED`) until their formats are implemented
    /// (docs/nested-types.md).
    Array {
        /// The element type and whether elements may be NULL.
        element: Box<Nested>,
    },
    /// MAP<key, value>. Keys are never NULL (Fluss makes every map key type NOT NULL).
    Map {
        /// The key type.
        key: Box<DataType>,
        /// The value type and whether values may be NULL.
        value: Box<Nested>,
    },
    /// ROW<name type, ...>: named fields (unique, not blank, at least one).
    Row {
        /// The fields in order.
        fields: Vec<RowField>,
    },
}

/// The error for writing or reading a value of an ARRAY, MAP or ROW type (not implemented yet);
/// the bindings use it too.
pub fn nested_unsupported(t: &DataType) -> Error {
    Error::client(
        ClientCode::Unsupported,
        format!("{t} values are not written or read by this version of fluss-writer (ARRAY, MAP and ROW columns: docs/nested-types.md)"),
    )
}

/// The element type of an ARRAY or the value type of a MAP, with its nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nested {
    /// The type.
    pub data_type: DataType,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

impl Nested {
    /// A nullable `data_type`.
    pub fn nullable(data_type: DataType) -> Nested {
        Nested { data_type, nullable: true }
    }

    /// A NOT NULL `data_type`.
    pub fn not_null(data_type: DataType) -> Nested {
        Nested { data_type, nullable: false }
    }
}

impl fmt::Display for Nested {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.data_type, if self.nullable { "" } else { " NOT NULL" })
    }
}

/// One field of a ROW type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowField {
    /// The field's name.
    pub name: String,
    /// Its type.
    pub data_type: DataType,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

impl RowField {
    /// A nullable field.
    pub fn new(name: impl Into<String>, data_type: DataType) -> RowField {
        RowField { name: name.into(), data_type, nullable: true }
    }

    /// A NOT NULL field.
    pub fn not_null(name: impl Into<String>, data_type: DataType) -> RowField {
        RowField { name: name.into(), data_type, nullable: false }
    }
}

impl DataType {
    /// Parse a type name as Fluss writes it: `"BIGINT"`, `"DECIMAL(10, 2)"`,
    /// `"TIMESTAMP_LTZ(3)"` (case-insensitive; `BOOL` and `INTEGER` accepted; TIME, TIMESTAMP and
    /// TIMESTAMP_LTZ default to precision 0, 6 and 6; DECIMAL(p) has scale 0). Every binding parses
    /// type names with this one function.
    pub fn parse(s: &str) -> Result<DataType> {
        let t = s.trim();
        if let Some(open) = t.find('<') {
            return DataType::parse_nested(s, t, open);
        }
        DataType::parse_scalar(s)
    }

    /// `ARRAY<T>`, `MAP<K, V>`, `ROW<name T, ...>`, each part optionally `NOT NULL` (row field
    /// names keep their case).
    fn parse_nested(s: &str, t: &str, open: usize) -> Result<DataType> {
        let bad = |why: &str| Error::client(ClientCode::InvalidTable, format!("malformed type {s:?}: {why}"));
        if !t.ends_with('>') {
            return Err(bad("no closing '>'"));
        }
        let inner = &t[open + 1..t.len() - 1];
        let parts = split_top_level(inner).ok_or_else(|| bad("unbalanced brackets"))?;
        let part = |p: &str| -> Result<Nested> {
            let p = p.trim();
            let upper = p.to_ascii_uppercase();
            match upper.strip_suffix("NOT NULL") {
                Some(rest) if rest.ends_with(char::is_whitespace) => Ok(Nested::not_null(DataType::parse(&p[..rest.len()])?)),
                _ => Ok(Nested::nullable(DataType::parse(p)?)),
            }
        };
        let t = match (t[..open].trim().to_ascii_uppercase().as_str(), parts.as_slice()) {
            ("ARRAY", [e]) => DataType::Array { element: Box::new(part(e)?) },
            ("MAP", [k, v]) => DataType::Map { key: Box::new(part(k)?.data_type), value: Box::new(part(v)?) },
            ("ROW", fields) => DataType::Row {
                fields: fields
                    .iter()
                    .map(|f| {
                        let f = f.trim();
                        let (name, rest) = f.split_once(char::is_whitespace).ok_or_else(|| bad("a ROW field needs a name and a type"))?;
                        let n = part(rest)?;
                        Ok(RowField { name: name.to_string(), data_type: n.data_type, nullable: n.nullable })
                    })
                    .collect::<Result<_>>()?,
            },
            _ => return Err(bad("expected ARRAY<T>, MAP<K, V> or ROW<name T, ...>")),
        };
        t.validate()?;
        Ok(t)
    }

    fn parse_scalar(s: &str) -> Result<DataType> {
        let bad = || Error::client(ClientCode::InvalidTable, format!("unknown or malformed type {s:?}"));
        let u = s.trim().to_ascii_uppercase();
        let (name, args) = match u.find('(') {
            Some(i) if u.ends_with(')') => (u[..i].trim().to_string(), Some(u[i + 1..u.len() - 1].to_string())),
            _ => (u.clone(), None),
        };
        let params = || Error::client(ClientCode::InvalidTable, format!("bad type parameters in {s:?}"));
        let wide: Vec<u32> = match &args {
            None => vec![],
            Some(a) => a.split(',').map(|x| x.trim().parse::<u32>()).collect::<std::result::Result<_, _>>().map_err(|_| params())?,
        };
        let nums: Vec<u8> = match name.as_str() {
            "CHAR" | "BINARY" => vec![],
            _ => wide.iter().map(|&n| u8::try_from(n).map_err(|_| params())).collect::<Result<_>>()?,
        };
        let one = |default: u8| match nums.as_slice() {
            [] => Ok(default),
            [p] => Ok(*p),
            _ => Err(bad()),
        };
        let length = || match wide.as_slice() {
            [] => Ok(1),
            [n] => Ok(*n),
            _ => Err(bad()),
        };
        let t = match (name.as_str(), nums.is_empty()) {
            ("BOOLEAN" | "BOOL", true) => DataType::Boolean,
            ("TINYINT", true) => DataType::TinyInt,
            ("SMALLINT", true) => DataType::SmallInt,
            ("INT" | "INTEGER", true) => DataType::Int,
            ("BIGINT", true) => DataType::BigInt,
            ("FLOAT", true) => DataType::Float,
            ("DOUBLE", true) => DataType::Double,
            ("STRING", true) => DataType::String,
            ("BYTES", true) => DataType::Bytes,
            ("DATE", true) => DataType::Date,
            ("CHAR", _) => DataType::Char { length: length()? },
            ("BINARY", _) => DataType::Binary { length: length()? },
            ("TIME", _) => DataType::Time { precision: one(0)? },
            ("TIMESTAMP", _) => DataType::Timestamp { precision: one(6)? },
            ("TIMESTAMP_LTZ", _) => DataType::TimestampLtz { precision: one(6)? },
            ("DECIMAL", false) => match nums.as_slice() {
                [p] => DataType::Decimal { precision: *p, scale: 0 },
                [p, sc] => DataType::Decimal { precision: *p, scale: *sc },
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        };
        t.validate()?;
        Ok(t)
    }

    /// The Fluss type of an Arrow type, nested types included (the inverse of the mapping of
    /// [`Schema::to_arrow`], plus the Arrow types a write converts losslessly; a dictionary maps
    /// as its values; the rules: `fluss_type` in rust/core/src/wire/arrow.rs). `column` names the column in
    /// the error.
    pub fn from_arrow(column: &str, t: &arrow_schema::DataType) -> Result<DataType> {
        crate::wire::arrow::fluss_type(column, t)
    }

    /// DECIMAL(p, s), checked.
    pub fn decimal(precision: u8, scale: u8) -> Result<DataType> {
        if !(1..=38).contains(&precision) || scale > precision {
            return Err(Error::client(
                ClientCode::InvalidTable,
                format!("DECIMAL({precision}, {scale}) is out of range: precision 1..=38, scale 0..=precision"),
            ));
        }
        Ok(DataType::Decimal { precision, scale })
    }

    /// Whether this is ARRAY, MAP or ROW.
    #[inline]
    pub fn is_nested(&self) -> bool {
        matches!(self, DataType::Array { .. } | DataType::Map { .. } | DataType::Row { .. })
    }

    /// Validate type parameters.
    pub fn validate(&self) -> Result<()> {
        let invalid = |m: String| Err(Error::client(ClientCode::InvalidTable, m));
        match self {
            DataType::Array { element } => return element.data_type.validate(),
            DataType::Map { key, value } => {
                key.validate()?;
                return value.data_type.validate();
            }
            DataType::Row { fields } => {
                if fields.is_empty() {
                    return invalid(format!("{self}: a ROW needs at least one field"));
                }
                let mut seen = std::collections::HashSet::new();
                for f in fields {
                    if f.name.trim().is_empty() {
                        return invalid(format!("{self}: field names must contain at least one non-whitespace character"));
                    }
                    if !seen.insert(f.name.as_str()) {
                        return invalid(format!("{self}: field names must be unique; {:?} repeats", f.name));
                    }
                    f.data_type.validate()?;
                }
                return Ok(());
            }
            _ => {}
        }
        match *self {
            DataType::Decimal { precision, scale } => DataType::decimal(precision, scale).map(|_| ()),
            DataType::Time { precision } | DataType::Timestamp { precision } | DataType::TimestampLtz { precision } if precision > 9 => {
                Err(Error::client(ClientCode::InvalidTable, format!("{self} precision must be 0..=9")))
            }
            DataType::Char { length } | DataType::Binary { length } if length == 0 || length > i32::MAX as u32 => {
                Err(Error::client(ClientCode::InvalidTable, format!("{self}: the length must be 1..=2147483647")))
            }
            _ => Ok(()),
        }
    }

    /// Whether a value of this type has a fixed encoded width in Fluss's row formats.
    pub fn is_variable_length(&self) -> bool {
        matches!(self, DataType::String | DataType::Bytes | DataType::Char { .. } | DataType::Binary { .. })
            || matches!(self, DataType::Decimal { precision, .. } if *precision > 18)
            || self.is_nested()
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => write!(f, "BOOLEAN"),
            DataType::TinyInt => write!(f, "TINYINT"),
            DataType::SmallInt => write!(f, "SMALLINT"),
            DataType::Int => write!(f, "INT"),
            DataType::BigInt => write!(f, "BIGINT"),
            DataType::Float => write!(f, "FLOAT"),
            DataType::Double => write!(f, "DOUBLE"),
            DataType::String => write!(f, "STRING"),
            DataType::Bytes => write!(f, "BYTES"),
            DataType::Char { length } => write!(f, "CHAR({length})"),
            DataType::Binary { length } => write!(f, "BINARY({length})"),
            DataType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            DataType::Date => write!(f, "DATE"),
            DataType::Time { precision } => write!(f, "TIME({precision})"),
            DataType::Timestamp { precision } => write!(f, "TIMESTAMP({precision})"),
            DataType::TimestampLtz { precision } => write!(f, "TIMESTAMP_LTZ({precision})"),
            DataType::Array { element } => write!(f, "ARRAY<{element}>"),
            DataType::Map { key, value } => write!(f, "MAP<{key}, {value}>"),
            DataType::Row { fields } => {
                write!(f, "ROW<")?;
                for (i, x) in fields.iter().enumerate() {
                    write!(f, "{}{} {}{}", if i > 0 { ", " } else { "" }, x.name, x.data_type, if x.nullable { "" } else { " NOT NULL" })?;
                }
                write!(f, ">")
            }
        }
    }
}

/// `s` split at its commas outside brackets (`None`: unbalanced).
fn split_top_level(s: &str) -> Option<Vec<&str>> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then(|| {
        out.push(&s[start..]);
        out
    })
}

/// The aggregation functions of Fluss's aggregation merge engine (`table.merge-engine =
/// aggregation`, Fluss 0.9 and 1.0; `AggFunctionType` in Fluss), as the server names them.
pub const AGG_FUNCTIONS: &[&str] = &[
    "sum",
    "product",
    "max",
    "min",
    "last_value",
    "last_value_ignore_nulls",
    "first_value",
    "first_value_ignore_nulls",
    "listagg",
    "string_agg",
    "bool_and",
    "bool_or",
    "rbm32",
    "rbm64",
];

/// How a table with `table.merge-engine = aggregation` merges a non-key column when a row with
/// the same primary key is written again: `sum`, `max`, `last_value_ignore_nulls` (what a column
/// without one gets), `listagg` with parameter `delimiter`, `rbm32` / `rbm64` (a BYTES column
/// holding a serialized Roaring bitmap; the server ORs them), ... (see [`AGG_FUNCTIONS`]). The
/// server checks that the function fits the column's type and its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggFunction {
    /// The function's name, lower case with underscores (`last_value_ignore_nulls`).
    pub name: String,
    /// Its parameters (only `listagg` / `string_agg` take one: `delimiter`).
    pub params: BTreeMap<String, String>,
}

impl AggFunction {
    /// The function named `name` (case and `-` / `_` as Fluss accepts them: `Last-Value` is
    /// `last_value`), without parameters; `InvalidTable` naming the known functions otherwise.
    pub fn new(name: &str) -> Result<AggFunction> {
        let n = name.trim().replace('-', "_").to_ascii_lowercase();
        if !AGG_FUNCTIONS.contains(&n.as_str()) {
            return Err(Error::client(
                ClientCode::InvalidTable,
                format!("unknown aggregation function {name:?}: expected one of {}", AGG_FUNCTIONS.join(", ")),
            ));
        }
        Ok(AggFunction { name: n, params: BTreeMap::new() })
    }

    /// The same function with parameter `key` = `value` (e.g. `delimiter` of `listagg`).
    pub fn with_param(mut self, key: impl Into<String>, value: impl Into<String>) -> AggFunction {
        self.params.insert(key.into(), value.into());
        self
    }
}

/// One column of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Column name (unique in its schema).
    pub name: String,
    /// Column type.
    pub data_type: DataType,
    /// Whether NULL is allowed (primary-key columns never).
    pub nullable: bool,
    /// Optional comment stored with the table.
    pub comment: Option<String>,
    /// How the aggregation merge engine merges this column (non-key columns of a table with
    /// `table.merge-engine = aggregation` only; `None`: the server's default,
    /// `last_value_ignore_nulls`).
    pub agg_function: Option<AggFunction>,
}

impl Column {
    /// A nullable column.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Column {
        Column { name: name.into(), data_type, nullable: true, comment: None, agg_function: None }
    }

    /// The same column, merged with `f` by a table with `table.merge-engine = aggregation`.
    pub fn with_agg_function(mut self, f: AggFunction) -> Column {
        self.agg_function = Some(f);
        self
    }

    /// The same column, NOT NULL.
    pub fn not_null(mut self) -> Column {
        self.nullable = false;
        self
    }
}

/// Columns plus an optional primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    columns: Vec<Column>,
    primary_key: Vec<String>,
}

impl Schema {
    /// Columns for the fields of an Arrow schema (types by [`DataType::from_arrow`], a
    /// non-nullable field is NOT NULL, at every level of a nested type).
    pub fn columns_from_arrow(schema: &arrow_schema::Schema) -> Result<Vec<Column>> {
        schema
            .fields()
            .iter()
            .map(|f| {
                let c = Column::new(f.name().clone(), DataType::from_arrow(f.name(), f.data_type())?);
                Ok(if f.is_nullable() { c } else { c.not_null() })
            })
            .collect()
    }

    /// The Arrow schema of the table: one field per column, same names and nullability, each
    /// type mapped as Fluss's Arrow log format stores it (what `write_arrow_batch` conforms to
    /// and read-back returns).
    pub fn to_arrow(&self) -> arrow_schema::SchemaRef {
        crate::wire::arrow_schema(self)
    }

    /// Build and validate a schema. Primary-key columns are forced NOT NULL (as the Fluss server
    /// does).
    pub fn new(columns: Vec<Column>, primary_key: Vec<String>) -> Result<Schema> {
        let bad = |m: String| Error::client(ClientCode::InvalidTable, m);
        if columns.is_empty() {
            return Err(bad("a schema needs at least one column".into()));
        }
        let mut columns = columns;
        for (i, c) in columns.iter().enumerate() {
            if c.name.is_empty() {
                return Err(bad(format!("column {i} has an empty name")));
            }
            if columns[..i].iter().any(|o| o.name == c.name) {
                return Err(bad(format!("duplicate column name {:?}", c.name)));
            }
            c.data_type.validate()?;
        }
        for (i, k) in primary_key.iter().enumerate() {
            if primary_key[..i].contains(k) {
                return Err(bad(format!("primary key names column {k:?} twice")));
            }
            match columns.iter_mut().find(|c| &c.name == k) {
                Some(c) if c.agg_function.is_some() => {
                    return Err(bad(format!(
                        "primary key column {k:?} cannot have an aggregation function (the server merges key columns by key)"
                    )))
                }
                Some(c) => c.nullable = false,
                None => return Err(bad(format!("primary key column {k:?} is not in the schema"))),
            }
        }
        Ok(Schema { columns, primary_key })
    }

    /// Start a schema builder.
    pub fn builder() -> SchemaBuilder {
        SchemaBuilder::default()
    }

    /// The columns in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Primary-key column names (empty for a log table).
    pub fn primary_key(&self) -> &[String] {
        &self.primary_key
    }

    /// Whether the schema has a primary key.
    pub fn has_primary_key(&self) -> bool {
        !self.primary_key.is_empty()
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether there are no columns (never true for a built schema).
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Index of a column by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Indexes of named columns; an unknown name is an error.
    pub fn indexes_of(&self, names: &[String]) -> Result<Vec<usize>> {
        names.iter().map(|n| self.index_of(n).ok_or_else(|| Error::invalid_row(format!("unknown column {n:?}")))).collect()
    }

    /// Indexes of the primary-key columns, in key order.
    pub fn primary_key_indexes(&self) -> Vec<usize> {
        self.primary_key.iter().map(|k| self.index_of(k).expect("validated")).collect()
    }

    /// The column types in order.
    pub fn types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.data_type.clone()).collect()
    }
}

/// Builder for [`Schema`].
#[derive(Default)]
pub struct SchemaBuilder {
    columns: Vec<Column>,
    primary_key: Vec<String>,
}

impl SchemaBuilder {
    /// Add a nullable column.
    pub fn column(mut self, name: impl Into<String>, t: DataType) -> Self {
        self.columns.push(Column::new(name, t));
        self
    }

    /// Add a NOT NULL column.
    pub fn column_not_null(mut self, name: impl Into<String>, t: DataType) -> Self {
        self.columns.push(Column::new(name, t).not_null());
        self
    }

    /// Set the primary key.
    pub fn primary_key<S: Into<String>>(mut self, cols: impl IntoIterator<Item = S>) -> Self {
        self.primary_key = cols.into_iter().map(Into::into).collect();
        self
    }

    /// Build and validate the schema.
    pub fn build(self) -> Result<Schema> {
        Schema::new(self.columns, self.primary_key)
    }
}

/// `database.table`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TablePath {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
}

impl TablePath {
    /// A checked path. Names follow Fluss's rules: ASCII letters, digits, `_` and `-`, 1 to 200
    /// characters, not starting with `__`.
    pub fn new(database: impl Into<String>, table: impl Into<String>) -> Result<TablePath> {
        let p = TablePath { database: database.into(), table: table.into() };
        validate_name(&p.database, "database")?;
        validate_name(&p.table, "table")?;
        Ok(p)
    }

    /// Parse `"db.table"`.
    pub fn parse(s: &str) -> Result<TablePath> {
        match s.split_once('.') {
            Some((d, t)) => TablePath::new(d, t),
            None => Err(Error::client(ClientCode::InvalidTable, format!("table path {s:?} is not of the form database.table"))),
        }
    }
}

/// Check a database or table name against Fluss's naming rules.
pub fn validate_name(name: &str, what: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && name != "."
        && name != ".."
        && !name.starts_with("__")
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::client(
            ClientCode::InvalidTable,
            format!("invalid {what} name {name:?}: use 1-200 ASCII letters, digits, '_' or '-', not starting with '__'"),
        ))
    }
}

impl fmt::Display for TablePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.database, self.table)
    }
}

/// What `create_table` takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDescriptor {
    /// The table's columns and primary key.
    pub schema: Schema,
    /// Number of buckets; `None` lets the server choose (`default.bucket.number`).
    pub bucket_count: Option<i32>,
    /// Bucket-key columns. Empty: for a primary-key table, the primary key; for a log table, no
    /// key (rows are spread by sticky assignment).
    pub bucket_key: Vec<String>,
    /// Partition columns (empty: not partitioned). Each distinct combination of their values is
    /// a partition with its own buckets; see [`partition`](crate::partition). A primary-key
    /// table's primary key must contain them.
    pub partition_keys: Vec<String>,
    /// Fluss `table.*` properties.
    pub properties: BTreeMap<String, String>,
    /// Free-form properties.
    pub custom_properties: BTreeMap<String, String>,
    /// Optional comment stored with the table.
    pub comment: Option<String>,
}

impl TableDescriptor {
    /// A descriptor with defaults for everything but the schema.
    pub fn new(schema: Schema) -> TableDescriptor {
        TableDescriptor {
            schema,
            bucket_count: None,
            bucket_key: Vec::new(),
            partition_keys: Vec::new(),
            properties: BTreeMap::new(),
            custom_properties: BTreeMap::new(),
            comment: None,
        }
    }

    /// Set the number of buckets.
    pub fn with_bucket_count(mut self, n: i32) -> Self {
        self.bucket_count = Some(n);
        self
    }

    /// Set the bucket-key columns.
    pub fn with_bucket_key<S: Into<String>>(mut self, cols: impl IntoIterator<Item = S>) -> Self {
        self.bucket_key = cols.into_iter().map(Into::into).collect();
        self
    }

    /// Set the partition columns.
    pub fn with_partition_keys<S: Into<String>>(mut self, cols: impl IntoIterator<Item = S>) -> Self {
        self.partition_keys = cols.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the boolean table option `key` is set to true (as Fluss reads it: case aside).
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.properties.get(key).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// Set a Fluss table property (`table.*`).
    pub fn with_property(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.properties.insert(k.into(), v.into());
        self
    }

    /// Check the descriptor and fill the defaults that the server would fill: the bucket key of
    /// a primary-key table defaults to its primary key; the bucket count defaults to
    /// `default_buckets`.
    pub fn normalized(&self, default_buckets: i32) -> Result<TableDescriptor> {
        let bad = |m: String| Error::client(ClientCode::InvalidTable, m);
        let mut d = self.clone();
        let n = d.bucket_count.unwrap_or(default_buckets);
        if !(1..=128_000).contains(&n) {
            return Err(bad(format!("bucket count {n} is out of range 1..=128000")));
        }
        d.bucket_count = Some(n);
        // The server's words (TableDescriptorValidation): keys hold scalar types only.
        let nested = |k: &String| d.schema.index_of(k).map(|c| &d.schema.columns()[c].data_type).filter(|t| t.is_nested());
        for k in d.schema.primary_key() {
            if let Some(t) = nested(k) {
                return Err(bad(format!(
                    "Primary key column '{k}' has unsupported data type {t}. Currently, primary key column does not support types: [ARRAY, MAP, ROW]."
                )));
            }
        }
        for k in &d.bucket_key {
            if d.schema.index_of(k).is_none() {
                return Err(bad(format!("bucket key column {k:?} is not in the schema")));
            }
            if let Some(t) = nested(k) {
                return Err(bad(format!(
                    "Bucket key column '{k}' has unsupported data type {t}. Currently, bucket key column does not support types: [ARRAY, MAP, ROW]."
                )));
            }
        }
        for (i, k) in d.partition_keys.iter().enumerate() {
            let col = d.schema.index_of(k).map(|c| &d.schema.columns()[c]);
            match col {
                None => return Err(bad(format!("partition key column {k:?} is not in the schema"))),
                Some(c) if !super::partition::is_partition_key_type(&c.data_type) => {
                    return Err(bad(format!("partition key column {k:?} has type {}, which cannot partition a table", c.data_type)))
                }
                Some(_) if d.partition_keys[..i].contains(k) => return Err(bad(format!("partition keys name {k:?} twice"))),
                Some(_) => {}
            }
        }
        if let Some(k) = d.bucket_key.iter().find(|k| d.partition_keys.contains(k)) {
            return Err(bad(format!("bucket key column {k:?} is a partition key; a bucket key cannot include partition keys")));
        }
        super::partition::AutoPartition::from_descriptor(&d)?;
        if d.schema.has_primary_key() {
            if let Some(k) = d.partition_keys.iter().find(|k| !d.schema.primary_key().contains(k)) {
                return Err(bad(format!("partition key column {k:?} must be part of the primary key of a partitioned primary-key table")));
            }
            let physical: Vec<String> = d.schema.primary_key().iter().filter(|k| !d.partition_keys.contains(k)).cloned().collect();
            if physical.is_empty() {
                return Err(bad("the primary key of a partitioned table needs a column that is not a partition key".into()));
            }
            if d.bucket_key.is_empty() {
                d.bucket_key = physical;
            } else if let Some(k) = d.bucket_key.iter().find(|k| !physical.contains(k)) {
                return Err(bad(format!("bucket key column {k:?} must be part of the primary key")));
            }
        }
        Ok(d)
    }

    /// The bucket count, or `default` if the descriptor leaves it to the server.
    pub fn bucket_count_or(&self, default: i32) -> i32 {
        self.bucket_count.unwrap_or(default)
    }
}

/// A table as the server knows it: id, schema id and the descriptor after server defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// The table's path.
    pub path: TablePath,
    /// The table's id (changes when a table of the same name is recreated).
    pub table_id: i64,
    /// The id of the schema in use.
    pub schema_id: i32,
    /// Normalized: `bucket_count` is `Some`, a primary-key table's `bucket_key` is set.
    pub descriptor: TableDescriptor,
    /// Creation time, epoch milliseconds.
    pub created_time: i64,
    /// Last modification time, epoch milliseconds.
    pub modified_time: i64,
    /// How often the table's bucket count was changed (`Admin::alter_bucket_count`; Fluss 1.0
    /// `bucket_count_epoch`). `None`: the server does not have per-partition bucket counts (Fluss
    /// 0.9, and 1.0 snapshots before them), so every partition has `bucket_count` buckets.
    /// `Some(0)`: never changed. Above 0, partitions created before the last change keep the
    /// count they were created with, and writes must name the count they were routed by.
    pub bucket_count_epoch: Option<i64>,
}

impl TableInfo {
    /// The table's schema.
    pub fn schema(&self) -> &Schema {
        &self.descriptor.schema
    }

    /// The table's number of buckets: of a partitioned table, the count that partitions created
    /// from now on get (each partition keeps the count it was created with; see
    /// [`bucket_count_epoch`](Self::bucket_count_epoch)).
    pub fn bucket_count(&self) -> i32 {
        self.descriptor.bucket_count.unwrap_or(1)
    }

    /// The info with `bucket_count` buckets: what a partition of this table that has its own
    /// count looks like (it keeps the count it was created with).
    pub(crate) fn with_bucket_count(&self, bucket_count: i32) -> TableInfo {
        let mut i = self.clone();
        i.descriptor.bucket_count = Some(bucket_count);
        i
    }

    /// Whether the table's bucket count was ever changed (epoch above 0): then partitions may
    /// have different counts, and writes must name the count they were routed by.
    pub fn was_rescaled(&self) -> bool {
        self.bucket_count_epoch.is_some_and(|e| e > 0)
    }

    /// Whether it is a primary-key table.
    pub fn has_primary_key(&self) -> bool {
        self.descriptor.schema.has_primary_key()
    }

    /// Whether the table is partitioned.
    pub fn is_partitioned(&self) -> bool {
        !self.descriptor.partition_keys.is_empty()
    }

    /// The partition columns (empty: not partitioned).
    pub fn partition_keys(&self) -> &[String] {
        &self.descriptor.partition_keys
    }

    /// Indexes of the key columns of a primary-key table as its rows are keyed inside a
    /// partition (Fluss's "physical primary key"): the primary key without the partition keys,
    /// in primary-key order. For a table without partitions, the primary key.
    pub fn physical_key_indexes(&self) -> Vec<usize> {
        let s = self.schema();
        s.primary_key().iter().filter(|k| !self.descriptor.partition_keys.contains(k)).map(|k| s.index_of(k).expect("validated")).collect()
    }

    /// Indexes of the bucket-key columns (empty for a log table without bucket key).
    pub fn bucket_key_indexes(&self) -> Vec<usize> {
        self.descriptor.bucket_key.iter().map(|k| self.schema().index_of(k).expect("validated")).collect()
    }
}

#[cfg(test)]
mod nested_type_tests {
    use super::*;

    #[test]
    fn nested_type_names_parse_print_and_parse_again() {
        for (name, printed) in [
            ("ARRAY<INT>", "ARRAY<INT>"),
            ("array<bigint not null>", "ARRAY<BIGINT NOT NULL>"),
            ("MAP<STRING, ARRAY<DECIMAL(10, 2)>>", "MAP<STRING, ARRAY<DECIMAL(10, 2)>>"),
            ("MAP<STRING NOT NULL, INT NOT NULL>", "MAP<STRING, INT NOT NULL>"),
            (
                "ROW<Name STRING NOT NULL, tags ARRAY<CHAR(3)>, at TIMESTAMP(3)>",
                "ROW<Name STRING NOT NULL, tags ARRAY<CHAR(3)>, at TIMESTAMP(3)>",
            ),
            ("ARRAY<ROW<a INT, b MAP<INT, ROW<c BINARY(4)>>>>", "ARRAY<ROW<a INT, b MAP<INT, ROW<c BINARY(4)>>>>"),
        ] {
            let t = DataType::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.to_string(), printed);
            assert_eq!(DataType::parse(printed).unwrap(), t);
            assert!(t.is_nested() && t.is_variable_length());
        }
        let row = DataType::parse("ROW<Name STRING NOT NULL, n INT>").unwrap();
        assert_eq!(row, DataType::Row { fields: vec![RowField::not_null("Name", DataType::String), RowField::new("n", DataType::Int)] });
    }

    #[test]
    fn malformed_and_invalid_nested_types_are_invalid_table() {
        for bad in [
            "ARRAY<INT",
            "ARRAY<>",
            "ARRAY<INT, INT>",
            "MAP<INT>",
            "ROW<>",
            "ROW<a>",
            "ROW<a INT, a STRING>",
            "SET<INT>",
            "ARRAY<DECIMAL(40, 2)>",
            "ROW<a ARRAY<INT>>>",
        ] {
            let e = DataType::parse(bad).expect_err(bad);
            assert_eq!(e.code(), ClientCode::InvalidTable as i32, "{bad}: {e}");
        }
    }
}
