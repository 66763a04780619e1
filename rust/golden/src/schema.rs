//! A compact JSON Schema validator for the subset `golden/schema/scenario.schema.json` uses:
//! `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `oneOf`,
//! `anyOf`, `minimum`, `minItems`, `minProperties` and local `$ref`s (`#/$defs/...`). A keyword
//! outside this subset is an error, so the schema cannot silently say more than is checked.

use serde_json::Value as Json;

const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "minimum",
    "minItems",
    "minProperties",
    "$ref",
];

/// One violation: where (a JSON pointer into the document) and what.
#[derive(Debug, Clone)]
pub struct Violation {
    pub path: String,
    pub message: String,
    /// A `const` mismatch (the field and the values it could have had): the alternative of a
    /// `oneOf`/`anyOf` holding it was not meant.
    discriminant: Option<(String, Vec<Json>)>,
    /// The value has the wrong JSON type: the alternative was not meant either.
    wrong_type: bool,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", if self.path.is_empty() { "/" } else { &self.path }, self.message)
    }
}

pub struct Schema {
    root: Json,
}

impl Schema {
    /// Load a schema, refusing keywords outside the subset.
    pub fn new(root: Json) -> Result<Schema, String> {
        fn walk(v: &Json, at: &str) -> Result<(), String> {
            let Some(o) = v.as_object() else { return Ok(()) };
            for (k, x) in o {
                if !KEYWORDS.contains(&k.as_str()) {
                    return Err(format!("schema {at}: keyword {k:?} is not supported by this validator"));
                }
                match k.as_str() {
                    "properties" | "$defs" => {
                        for (n, s) in x.as_object().into_iter().flatten() {
                            walk(s, &format!("{at}/{k}/{n}"))?;
                        }
                    }
                    "oneOf" | "anyOf" => {
                        for (i, s) in x.as_array().into_iter().flatten().enumerate() {
                            walk(s, &format!("{at}/{k}/{i}"))?;
                        }
                    }
                    "items" | "additionalProperties" => walk(x, &format!("{at}/{k}"))?,
                    _ => {}
                }
            }
            Ok(())
        }
        walk(&root, "#")?;
        Ok(Schema { root })
    }

    /// The schema of the golden scenarios, compiled in from `golden/schema/scenario.schema.json`.
    pub fn scenario() -> Schema {
        let text = include_str!("../../../golden/schema/scenario.schema.json");
        Schema::new(serde_json::from_str(text).expect("the scenario schema is JSON")).expect("the scenario schema is in the subset")
    }

    pub fn validate(&self, doc: &Json) -> Vec<Violation> {
        let mut out = Vec::new();
        self.check(&self.root, doc, "", &mut out);
        out
    }

    fn resolve<'a>(&'a self, s: &'a Json) -> &'a Json {
        match s.get("$ref").and_then(Json::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unsupported $ref {r}"));
                self.resolve(self.root.get("$defs").and_then(|d| d.get(name)).unwrap_or_else(|| panic!("unknown $ref {r}")))
            }
            None => s,
        }
    }

    fn check(&self, s: &Json, v: &Json, at: &str, out: &mut Vec<Violation>) {
        let s = self.resolve(s);
        let mut err = |m: String, d: Option<Vec<Json>>| {
            out.push(Violation { path: at.to_string(), message: m, discriminant: d.map(|d| (at.to_string(), d)), wrong_type: false })
        };
        if let Some(t) = s.get("type") {
            let names: Vec<&str> = match t {
                Json::String(x) => vec![x.as_str()],
                Json::Array(a) => a.iter().filter_map(Json::as_str).collect(),
                _ => vec![],
            };
            if !names.iter().any(|n| type_is(v, n)) {
                err(format!("{} is not of type {}", short(v), names.join(" or ")), None);
                if let Some(x) = out.last_mut() {
                    x.wrong_type = true;
                }
                return;
            }
        }
        if let Some(c) = s.get("const") {
            if v != c {
                err(format!("{} is not {c}", short(v)), Some(vec![c.clone()]));
                return;
            }
        }
        if let Some(Json::Array(e)) = s.get("enum") {
            if !e.contains(v) {
                let all: Vec<String> = e.iter().map(Json::to_string).collect();
                err(format!("{} is not one of {}", short(v), all.join(", ")), None);
            }
        }
        if let (Some(m), Some(x)) = (s.get("minimum").and_then(Json::as_f64), v.as_f64()) {
            if x < m {
                err(format!("{x} is less than {m}"), None);
            }
        }
        if let (Some(m), Some(a)) = (s.get("minItems").and_then(Json::as_u64), v.as_array()) {
            if (a.len() as u64) < m {
                err(format!("needs at least {m} item(s)"), None);
            }
        }
        if let (Some(m), Some(o)) = (s.get("minProperties").and_then(Json::as_u64), v.as_object()) {
            if (o.len() as u64) < m {
                err(format!("needs at least {m} entry(ies)"), None);
            }
        }
        if let (Some(items), Some(a)) = (s.get("items"), v.as_array()) {
            for (i, x) in a.iter().enumerate() {
                self.check(items, x, &format!("{at}/{i}"), out);
            }
        }
        if let Some(o) = v.as_object() {
            let props = s.get("properties").and_then(Json::as_object);
            for r in s.get("required").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str) {
                if !o.contains_key(r) {
                    out.push(Violation {
                        path: at.to_string(),
                        message: format!("missing field {r:?}"),
                        discriminant: None,
                        wrong_type: false,
                    });
                }
            }
            let mut unknown = Vec::new();
            for (k, x) in o {
                let at = format!("{at}/{k}");
                match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
                    (Some(ps), _) => self.check(ps, x, &at, out),
                    (None, Some(Json::Bool(false))) => unknown.push(k.clone()),
                    (None, Some(ap)) if ap.is_object() => self.check(ap, x, &at, out),
                    (None, _) => {}
                }
            }
            if !unknown.is_empty() {
                out.push(Violation {
                    path: at.to_string(),
                    message: format!("unknown field(s) {unknown:?} (a runner never skips what the format does not define)"),
                    discriminant: None,
                    wrong_type: false,
                });
            }
        }
        for (kw, exactly_one) in [("oneOf", true), ("anyOf", false)] {
            let Some(Json::Array(alts)) = s.get(kw) else { continue };
            let results: Vec<Vec<Violation>> = alts
                .iter()
                .map(|a| {
                    let mut o = Vec::new();
                    self.check(a, v, at, &mut o);
                    o
                })
                .collect();
            let passed = results.iter().filter(|r| r.is_empty()).count();
            if passed == 0 {
                // Report the alternative that was meant: one whose discriminating `const`s (on the
                // value itself or one of its fields) match, with the fewest violations; if none was
                // meant, say which values the discriminating field may have.
                let not_meant = |r: &Vec<Violation>| {
                    r.iter().any(|x| {
                        (x.wrong_type && x.path == at)
                            || x.discriminant.as_ref().is_some_and(|(p, _)| p == at || p.rsplit_once('/').map(|p| p.0) == Some(at))
                    })
                };
                match results.iter().filter(|r| !not_meant(r)).min_by_key(|r| r.len()) {
                    Some(r) => out.extend(r.iter().cloned()),
                    None => {
                        let mut field = None;
                        let mut allowed: Vec<Json> = Vec::new();
                        for (p, vals) in results.iter().flatten().filter_map(|x| x.discriminant.as_ref()) {
                            if field.get_or_insert_with(|| p.clone()) == p {
                                allowed.extend(vals.iter().filter(|x| !allowed.contains(x)).cloned().collect::<Vec<_>>());
                            }
                        }
                        let field = field.unwrap_or_else(|| at.to_string());
                        let here = pointer(v, &field[at.len()..]);
                        let names: Vec<String> = allowed.iter().map(Json::to_string).collect();
                        out.push(Violation {
                            path: field.clone(),
                            message: format!("{} is not one of {}", here.map_or("(absent)".into(), short), names.join(", ")),
                            discriminant: Some((field, allowed)),
                            wrong_type: false,
                        });
                    }
                }
            } else if exactly_one && passed > 1 {
                out.push(Violation {
                    path: at.to_string(),
                    message: format!("matches {passed} alternatives of oneOf"),
                    discriminant: None,
                    wrong_type: false,
                });
            }
        }
    }
}

fn pointer<'a>(v: &'a Json, rel: &str) -> Option<&'a Json> {
    if rel.is_empty() {
        Some(v)
    } else {
        v.pointer(rel)
    }
}

fn type_is(v: &Json, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => panic!("unsupported type {t}"),
    }
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..s.char_indices().take_while(|(i, _)| *i < 57).last().map_or(0, |(i, c)| i + c.len_utf8())])
    } else {
        s
    }
}
