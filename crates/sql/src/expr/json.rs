//! JSON values and the `JSON_*` functions.
//!
//! A JSON value travels as its text in MySQL's normal form: members sorted by key length,
//! then key bytes; `": "` and `", "` between parts. Functions parse their JSON arguments,
//! compute, and print the result in that form again. A SQL value given where JSON is
//! expected (a member value, an array element) is converted by [`JsonFunc::FromScalar`],
//! which the binder puts around every such argument that is not JSON already: so the text
//! `'{"a": 1}'` becomes a JSON string there, while a JSON column or function result is
//! embedded as it is, as in MySQL.
//!
//! Paths: `$`, `.key`, `."key"`, `.*`, `[n]`, `[last]`, `[last - n]`, `[*]`. A path with
//! a wildcard may only read.

use std::cmp::Ordering;

use serde_json::{Map, Value};
use strata_codec::Datum;

use crate::error::{Error, Result};
use crate::types::datum_to_text;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFunc {
    /// A SQL value as JSON (inserted by the binder, not callable by name).
    FromScalar,
    /// `CAST(x AS JSON)`: text is parsed as JSON, other values converted.
    Cast,
    Object,
    Array,
    Extract,
    /// `doc ->> path`, `JSON_UNQUOTE(JSON_EXTRACT(doc, path))`.
    ExtractText,
    Unquote,
    Quote,
    Valid,
    Type,
    Length,
    Depth,
    Keys,
    Contains,
    ContainsPath,
    Set,
    Insert,
    Replace,
    Remove,
    ArrayAppend,
    MergePatch,
    MergePreserve,
}

/// What a JSON function returns, as the client sees it.
pub enum JsonResult {
    Json,
    Text,
    Integer,
}

impl JsonFunc {
    pub fn by_name(name: &str) -> Option<JsonFunc> {
        use JsonFunc::*;
        Some(match name {
            "JSON_OBJECT" => Object,
            "JSON_ARRAY" => Array,
            "JSON_EXTRACT" => Extract,
            "JSON_UNQUOTE" => Unquote,
            "JSON_QUOTE" => Quote,
            "JSON_VALID" => Valid,
            "JSON_TYPE" => Type,
            "JSON_LENGTH" => Length,
            "JSON_DEPTH" => Depth,
            "JSON_KEYS" => Keys,
            "JSON_CONTAINS" => Contains,
            "JSON_CONTAINS_PATH" => ContainsPath,
            "JSON_SET" => Set,
            "JSON_INSERT" => Insert,
            "JSON_REPLACE" => Replace,
            "JSON_REMOVE" => Remove,
            "JSON_ARRAY_APPEND" => ArrayAppend,
            "JSON_MERGE_PATCH" => MergePatch,
            "JSON_MERGE_PRESERVE" | "JSON_MERGE" => MergePreserve,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        use JsonFunc::*;
        match self {
            FromScalar | Cast => "cast_as_json",
            Object => "json_object",
            Array => "json_array",
            Extract | ExtractText => "json_extract",
            Unquote => "json_unquote",
            Quote => "json_quote",
            Valid => "json_valid",
            Type => "json_type",
            Length => "json_length",
            Depth => "json_depth",
            Keys => "json_keys",
            Contains => "json_contains",
            ContainsPath => "json_contains_path",
            Set => "json_set",
            Insert => "json_insert",
            Replace => "json_replace",
            Remove => "json_remove",
            ArrayAppend => "json_array_append",
            MergePatch => "json_merge_patch",
            MergePreserve => "json_merge_preserve",
        }
    }

    pub fn arity_ok(self, n: usize) -> bool {
        use JsonFunc::*;
        match self {
            FromScalar | Cast | Unquote | Quote | Valid | Type | Depth => n == 1,
            Object => n.is_multiple_of(2),
            Array => true,
            Extract => n >= 2,
            ExtractText => n == 2,
            Length | Keys => n == 1 || n == 2,
            Contains => n == 2 || n == 3,
            ContainsPath => n >= 3,
            Set | Insert | Replace | ArrayAppend => n >= 3 && n % 2 == 1,
            Remove => n >= 2,
            MergePatch | MergePreserve => n >= 2,
        }
    }

    pub fn returns(self) -> JsonResult {
        use JsonFunc::*;
        match self {
            ExtractText | Unquote | Quote | Type => JsonResult::Text,
            Valid | Length | Depth | Contains | ContainsPath => JsonResult::Integer,
            _ => JsonResult::Json,
        }
    }

    /// Whether argument `i` of `n` is a value to embed (converted from SQL unless JSON).
    pub fn is_value_argument(self, i: usize) -> bool {
        use JsonFunc::*;
        match self {
            Object => i % 2 == 1,
            Array => true,
            Set | Insert | Replace | ArrayAppend => i >= 2 && i.is_multiple_of(2),
            _ => false,
        }
    }
}

/// Prints `value` in MySQL's normal form.
pub fn print(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|(a, _), (b, _)| key_order(a, b));
            out.push('{');
            for (i, (key, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_value(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The JSON text of a SQL value (text becomes a JSON string).
pub fn scalar_json(value: &Datum) -> String {
    print(&from_scalar(value))
}

fn json_datum(value: &Value) -> Datum {
    Datum::Bytes(print(value).into_bytes())
}

/// How deeply a JSON document may nest arrays and objects (MySQL's limit).
pub const JSON_MAX_DEPTH: usize = 100;

/// MySQL's 3157, for a document nested deeper than [`JSON_MAX_DEPTH`].
fn too_deep() -> Error {
    Error::new(
        3157,
        "22032",
        "The JSON document exceeds the maximum depth.",
    )
}

/// Whether `text` opens more than [`JSON_MAX_DEPTH`] arrays and objects inside one another
/// (brackets inside strings do not count). Read without recursion, so any length is fine.
fn nests_too_deep(text: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > JSON_MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Parses a JSON document: 3157 when it nests too deep, else the parser's verdict.
fn parse_document(text: &[u8]) -> Result<std::result::Result<Value, serde_json::Error>> {
    if nests_too_deep(text) {
        return Err(too_deep());
    }
    Ok(serde_json::from_slice::<Value>(text))
}

/// The error for text that is not JSON, in argument `position` (from 1) of `func`.
fn invalid_argument(func: JsonFunc, position: usize, error: &serde_json::Error) -> Error {
    Error::new(
        3141,
        "22032",
        format!(
            "Invalid JSON text in argument {position} to function {}: \"{}\" at position {}.",
            func.name(),
            describe(error),
            error.column().saturating_sub(1)
        ),
    )
}

fn describe(error: &serde_json::Error) -> String {
    let text = error.to_string();
    text.split(" at line ").next().unwrap_or(&text).to_string()
}

/// Parses a column's JSON text, or gives MySQL's 3140 naming the column.
pub fn parse_for_column(text: &[u8], column: &str) -> Result<String> {
    parse_document(text)?.map(|v| print(&v)).map_err(|e| {
        Error::new(
            3140,
            "22032",
            format!(
                "Invalid JSON text: \"{}\" at position {} in value for column '{column}'.",
                describe(&e),
                e.column().saturating_sub(1)
            ),
        )
    })
}

/// A SQL value as JSON: text becomes a JSON string, numbers numbers, NULL null.
fn from_scalar(value: &Datum) -> Value {
    match value {
        Datum::Null => Value::Null,
        Datum::Int(i) => Value::from(*i),
        Datum::UInt(u) => Value::from(*u),
        Datum::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Datum::Decimal(d) => serde_json::from_str::<Value>(&d.to_string())
            .unwrap_or_else(|_| Value::String(d.to_string())),
        other => Value::String(String::from_utf8_lossy(&datum_to_text(other)).into_owned()),
    }
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq)]
enum Leg {
    Key(String),
    AnyKey,
    Index(usize),
    /// `last - n`.
    FromLast(usize),
    AnyIndex,
}

impl Leg {
    fn is_wildcard(&self) -> bool {
        matches!(self, Leg::AnyKey | Leg::AnyIndex)
    }
}

fn path_error(at: usize) -> Error {
    Error::new(
        3143,
        "42000",
        format!("Invalid JSON path expression. The error is around character position {at}."),
    )
}

/// Parses a path (`$…`).
fn parse_path(text: &[u8]) -> Result<Vec<Leg>> {
    let text = std::str::from_utf8(text).map_err(|_| path_error(0))?;
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let skip_spaces = |at: &mut usize| {
        while *at < chars.len() && chars[*at].is_whitespace() {
            *at += 1;
        }
    };
    skip_spaces(&mut at);
    if chars.get(at) != Some(&'$') {
        return Err(path_error(at));
    }
    at += 1;
    let mut legs = Vec::new();
    loop {
        skip_spaces(&mut at);
        match chars.get(at) {
            None => return Ok(legs),
            Some('.') => {
                at += 1;
                skip_spaces(&mut at);
                match chars.get(at) {
                    Some('*') => {
                        at += 1;
                        legs.push(Leg::AnyKey);
                    }
                    Some('"') => {
                        at += 1;
                        let mut key = String::new();
                        loop {
                            match chars.get(at) {
                                None => return Err(path_error(at)),
                                Some('"') => break,
                                Some('\\') => {
                                    at += 1;
                                    key.push(*chars.get(at).ok_or_else(|| path_error(at))?);
                                }
                                Some(c) => key.push(*c),
                            }
                            at += 1;
                        }
                        at += 1;
                        legs.push(Leg::Key(key));
                    }
                    _ => {
                        let start = at;
                        while at < chars.len()
                            && (chars[at].is_alphanumeric() || chars[at] == '_' || chars[at] == '$')
                        {
                            at += 1;
                        }
                        if at == start || chars[start].is_ascii_digit() {
                            return Err(path_error(start));
                        }
                        legs.push(Leg::Key(chars[start..at].iter().collect()));
                    }
                }
            }
            Some('[') => {
                at += 1;
                let close = chars[at..]
                    .iter()
                    .position(|c| *c == ']')
                    .map(|p| at + p)
                    .ok_or_else(|| path_error(at))?;
                let inner: String = chars[at..close].iter().collect();
                let inner = inner.trim();
                let leg = if inner == "*" {
                    Leg::AnyIndex
                } else if let Some(rest) = inner.strip_prefix("last") {
                    let rest = rest.trim();
                    if rest.is_empty() {
                        Leg::FromLast(0)
                    } else {
                        let n = rest
                            .strip_prefix('-')
                            .and_then(|n| n.trim().parse().ok())
                            .ok_or_else(|| path_error(at))?;
                        Leg::FromLast(n)
                    }
                } else {
                    Leg::Index(inner.parse().map_err(|_| path_error(at))?)
                };
                legs.push(leg);
                at = close + 1;
            }
            Some(_) => return Err(path_error(at)),
        }
    }
}

/// Refuses a path with a wildcard where a path must name one place (to change or remove).
fn refuse_wildcards(legs: &[Leg]) -> Result<()> {
    if legs.iter().any(Leg::is_wildcard) {
        return Err(Error::new(
            3149,
            "42000",
            "In this situation, path expressions may not contain the * and ** tokens or an \
             array range.",
        ));
    }
    Ok(())
}

/// The position `leg` names in an array of `len` elements, if any.
fn index_of(leg: &Leg, len: usize) -> Option<usize> {
    match leg {
        Leg::Index(i) => Some(*i).filter(|i| *i < len),
        Leg::FromLast(n) => len.checked_sub(1 + n),
        _ => None,
    }
}

/// Collects the values `legs` lead to from `value`. An index applied to a value that is not
/// an array treats it as an array of one, as MySQL does.
fn find<'a>(value: &'a Value, legs: &[Leg], out: &mut Vec<&'a Value>) {
    let Some((leg, rest)) = legs.split_first() else {
        out.push(value);
        return;
    };
    match (leg, value) {
        (Leg::Key(k), Value::Object(map)) => {
            if let Some(v) = map.get(k) {
                find(v, rest, out);
            }
        }
        (Leg::AnyKey, Value::Object(map)) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|(a, _), (b, _)| key_order(a, b));
            for (_, v) in members {
                find(v, rest, out);
            }
        }
        (Leg::AnyIndex, Value::Array(items)) => {
            for v in items {
                find(v, rest, out);
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), Value::Array(items)) => {
            if let Some(i) = index_of(leg, items.len()) {
                find(&items[i], rest, out);
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), scalar) if index_of(leg, 1) == Some(0) => {
            find(scalar, rest, out);
        }
        _ => {}
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Change {
    Set,
    Insert,
    Replace,
}

/// Sets the value `legs` lead to (or a new member or element at their end) to `new`.
fn change(value: &mut Value, legs: &[Leg], new: &Value, how: Change) {
    let Some((leg, rest)) = legs.split_first() else {
        if how != Change::Insert {
            *value = new.clone();
        }
        return;
    };
    match (leg, value) {
        (Leg::Key(k), Value::Object(map)) => match map.get_mut(k) {
            Some(member) => change(member, rest, new, how),
            None if rest.is_empty() && how != Change::Replace => {
                map.insert(k.clone(), new.clone());
            }
            None => {}
        },
        (Leg::Index(_) | Leg::FromLast(_), Value::Array(items)) => {
            match index_of(leg, items.len()) {
                Some(i) => change(&mut items[i], rest, new, how),
                None if rest.is_empty() && how != Change::Replace => items.push(new.clone()),
                None => {}
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), scalar) => {
            if index_of(leg, 1) == Some(0) {
                change(scalar, rest, new, how);
            } else if rest.is_empty() && how != Change::Replace {
                // A new element past a value that is not an array: the value becomes one.
                let old = std::mem::take(scalar);
                *scalar = Value::Array(vec![old, new.clone()]);
            }
        }
        _ => {}
    }
}

/// Removes what `legs` lead to.
fn remove(value: &mut Value, legs: &[Leg]) {
    let Some((leg, rest)) = legs.split_first() else {
        return;
    };
    match (leg, value) {
        (Leg::Key(k), Value::Object(map)) => {
            if rest.is_empty() {
                map.remove(k);
            } else if let Some(member) = map.get_mut(k) {
                remove(member, rest);
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), Value::Array(items)) => {
            if let Some(i) = index_of(leg, items.len()) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    remove(&mut items[i], rest);
                }
            }
        }
        _ => {}
    }
}

/// Appends `new` to the array `legs` lead to; a value that is not an array becomes one first.
fn append(value: &mut Value, legs: &[Leg], new: &Value) {
    let Some((leg, rest)) = legs.split_first() else {
        match value {
            Value::Array(items) => items.push(new.clone()),
            other => {
                let old = std::mem::take(other);
                *other = Value::Array(vec![old, new.clone()]);
            }
        }
        return;
    };
    match (leg, value) {
        (Leg::Key(k), Value::Object(map)) => {
            if let Some(member) = map.get_mut(k) {
                append(member, rest, new);
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), Value::Array(items)) => {
            if let Some(i) = index_of(leg, items.len()) {
                append(&mut items[i], rest, new);
            }
        }
        (Leg::Index(_) | Leg::FromLast(_), scalar) if index_of(leg, 1) == Some(0) => {
            append(scalar, rest, new);
        }
        _ => {}
    }
}

/// Whether `target` contains `candidate` (MySQL's JSON_CONTAINS).
fn contains(target: &Value, candidate: &Value) -> bool {
    match (target, candidate) {
        (Value::Array(items), Value::Array(wanted)) => {
            wanted.iter().all(|w| items.iter().any(|i| contains(i, w)))
        }
        (Value::Array(items), scalar) => items.iter().any(|i| contains(i, scalar)),
        (Value::Object(map), Value::Object(wanted)) => wanted
            .iter()
            .all(|(k, w)| map.get(k).is_some_and(|v| contains(v, w))),
        (a, b) => equal(a, b),
    }
}

/// JSON equality, numbers by value.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

fn depth(value: &Value) -> i64 {
    match value {
        Value::Array(items) if !items.is_empty() => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) if !map.is_empty() => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 1,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "OBJECT",
        Value::Array(_) => "ARRAY",
        Value::String(_) => "STRING",
        Value::Bool(_) => "BOOLEAN",
        Value::Null => "NULL",
        Value::Number(n) if n.is_i64() => "INTEGER",
        Value::Number(n) if n.is_u64() => "UNSIGNED INTEGER",
        Value::Number(_) => "DOUBLE",
    }
}

fn merge_preserve(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut x), Value::Object(y)) => {
            for (k, v) in y {
                let merged = match x.remove(&k) {
                    Some(old) => merge_preserve(old, v),
                    None => v,
                };
                x.insert(k, merged);
            }
            Value::Object(x)
        }
        (a, b) => {
            let mut items = match a {
                Value::Array(items) => items,
                other => vec![other],
            };
            match b {
                Value::Array(more) => items.extend(more),
                other => items.push(other),
            }
            Value::Array(items)
        }
    }
}

fn merge_patch(a: Value, b: Value) -> Value {
    let Value::Object(patch) = b else {
        return b;
    };
    let mut target = match a {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for (k, v) in patch {
        if v.is_null() {
            target.remove(&k);
        } else {
            let old = target.remove(&k).unwrap_or(Value::Null);
            target.insert(k, merge_patch(old, v));
        }
    }
    Value::Object(target)
}

/// Unquotes the text of a JSON string; other text is returned as it is.
fn unquote(text: &[u8]) -> Result<Datum> {
    if text.len() >= 2 && text[0] == b'"' && text[text.len() - 1] == b'"' {
        return match parse_document(text)? {
            Ok(Value::String(s)) => Ok(Datum::Bytes(s.into_bytes())),
            Ok(_) => Ok(Datum::Bytes(text.to_vec())),
            Err(e) => Err(invalid_argument(JsonFunc::Unquote, 1, &e)),
        };
    }
    Ok(Datum::Bytes(text.to_vec()))
}

pub(super) fn eval(func: JsonFunc, values: &[Datum]) -> Result<Datum> {
    use JsonFunc::*;
    // Parses argument `i` as JSON.
    let doc = |i: usize| -> Result<Value> {
        parse_document(&datum_to_text(&values[i]))?.map_err(|e| invalid_argument(func, i + 1, &e))
    };
    let path = |i: usize| parse_path(&datum_to_text(&values[i]));
    match func {
        FromScalar => return Ok(json_datum(&from_scalar(&values[0]))),
        Cast => {
            return Ok(match &values[0] {
                Datum::Bytes(_) => json_datum(&doc(0)?),
                other => json_datum(&from_scalar(other)),
            })
        }
        Object => {
            let mut map = Map::new();
            for pair in values.chunks(2) {
                if pair[0] == Datum::Null {
                    return Err(Error::new(
                        3158,
                        "22032",
                        "JSON documents may not contain NULL member names.",
                    ));
                }
                let key = String::from_utf8_lossy(&datum_to_text(&pair[0])).into_owned();
                let value = serde_json::from_slice(&datum_to_text(&pair[1]))
                    .unwrap_or_else(|_| from_scalar(&pair[1]));
                map.insert(key, value);
            }
            return Ok(json_datum(&Value::Object(map)));
        }
        Array => {
            let items = values
                .iter()
                .map(|v| {
                    serde_json::from_slice(&datum_to_text(v)).unwrap_or_else(|_| from_scalar(v))
                })
                .collect();
            return Ok(json_datum(&Value::Array(items)));
        }
        Valid => {
            return Ok(match &values[0] {
                Datum::Null => Datum::Null,
                v => Datum::Int(parse_document(&datum_to_text(v))?.is_ok() as i64),
            })
        }
        Quote => {
            return Ok(match &values[0] {
                Datum::Null => Datum::Null,
                v => Datum::Bytes(
                    Value::String(String::from_utf8_lossy(&datum_to_text(v)).into_owned())
                        .to_string()
                        .into_bytes(),
                ),
            })
        }
        _ => {}
    }
    if values[0] == Datum::Null {
        return Ok(Datum::Null);
    }
    Ok(match func {
        FromScalar | Cast | Object | Array | Valid | Quote => unreachable!("handled above"),
        Unquote => unquote(&datum_to_text(&values[0]))?,
        Extract | ExtractText => {
            let value = doc(0)?;
            let mut found = Vec::new();
            let mut wrap = values.len() > 2;
            for (i, arg) in values.iter().enumerate().skip(1) {
                if *arg == Datum::Null {
                    return Ok(Datum::Null);
                }
                let legs = path(i)?;
                wrap |= legs.iter().any(Leg::is_wildcard);
                find(&value, &legs, &mut found);
            }
            let result = match (found.len(), wrap) {
                (0, _) => return Ok(Datum::Null),
                (_, true) => Value::Array(found.into_iter().cloned().collect()),
                (_, false) => found[0].clone(),
            };
            match (func, result) {
                (ExtractText, Value::String(s)) => Datum::Bytes(s.into_bytes()),
                (_, result) => json_datum(&result),
            }
        }
        Type => Datum::Bytes(type_name(&doc(0)?).as_bytes().to_vec()),
        Depth => Datum::Int(depth(&doc(0)?)),
        Length | Keys => {
            let value = doc(0)?;
            let mut found = vec![&value];
            if values.len() == 2 {
                if values[1] == Datum::Null {
                    return Ok(Datum::Null);
                }
                found.clear();
                find(&value, &path(1)?, &mut found);
            }
            let Some(target) = found.first() else {
                return Ok(Datum::Null);
            };
            match (func, target) {
                (Length, Value::Array(items)) => Datum::Int(items.len() as i64),
                (Length, Value::Object(map)) => Datum::Int(map.len() as i64),
                (Length, _) => Datum::Int(1),
                (_, Value::Object(map)) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort_by(|a, b| key_order(a, b));
                    json_datum(&Value::Array(
                        keys.into_iter().map(|k| Value::String(k.clone())).collect(),
                    ))
                }
                _ => Datum::Null,
            }
        }
        Contains => {
            if values.contains(&Datum::Null) {
                return Ok(Datum::Null);
            }
            let (target, candidate) = (doc(0)?, doc(1)?);
            let mut found = vec![&target];
            if values.len() == 3 {
                found.clear();
                find(&target, &path(2)?, &mut found);
            }
            match found.first() {
                Some(t) => Datum::Int(contains(t, &candidate) as i64),
                None => Datum::Null,
            }
        }
        ContainsPath => {
            if values.contains(&Datum::Null) {
                return Ok(Datum::Null);
            }
            let value = doc(0)?;
            let all = match datum_to_text(&values[1]).to_ascii_lowercase().as_slice() {
                b"one" => false,
                b"all" => true,
                _ => {
                    return Err(Error::new(
                        3154,
                        "42000",
                        "The oneOrAll argument to json_contains_path may take these values: \
                         'one' or 'all'.",
                    ))
                }
            };
            let mut hits = Vec::new();
            for i in 2..values.len() {
                let mut found = Vec::new();
                find(&value, &path(i)?, &mut found);
                hits.push(!found.is_empty());
            }
            let answer = if all {
                hits.iter().all(|h| *h)
            } else {
                hits.iter().any(|h| *h)
            };
            Datum::Int(answer as i64)
        }
        Set | Insert | Replace | ArrayAppend => {
            let mut value = doc(0)?;
            for pair in (1..values.len()).step_by(2) {
                if values[pair] == Datum::Null {
                    return Ok(Datum::Null);
                }
                let legs = path(pair)?;
                refuse_wildcards(&legs)?;
                let new = serde_json::from_slice(&datum_to_text(&values[pair + 1]))
                    .unwrap_or_else(|_| from_scalar(&values[pair + 1]));
                match func {
                    Set => change(&mut value, &legs, &new, Change::Set),
                    Insert => change(&mut value, &legs, &new, Change::Insert),
                    Replace => change(&mut value, &legs, &new, Change::Replace),
                    _ => append(&mut value, &legs, &new),
                }
            }
            json_datum(&value)
        }
        Remove => {
            let mut value = doc(0)?;
            for (i, arg) in values.iter().enumerate().skip(1) {
                if *arg == Datum::Null {
                    return Ok(Datum::Null);
                }
                let legs = path(i)?;
                if legs.is_empty() {
                    return Err(Error::new(
                        3153,
                        "42000",
                        "The path expression '$' is not allowed in this context.",
                    ));
                }
                refuse_wildcards(&legs)?;
                remove(&mut value, &legs);
            }
            json_datum(&value)
        }
        MergePatch | MergePreserve => {
            if values.contains(&Datum::Null) {
                return Ok(Datum::Null);
            }
            let mut merged = doc(0)?;
            for i in 1..values.len() {
                let next = doc(i)?;
                merged = match func {
                    MergePatch => merge_patch(merged, next),
                    _ => merge_preserve(merged, next),
                };
            }
            json_datum(&merged)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Datum {
        Datum::Bytes(text.as_bytes().to_vec())
    }

    fn text(d: Datum) -> String {
        String::from_utf8(datum_to_text(&d)).unwrap()
    }

    #[test]
    fn members_print_in_mysql_order() {
        let v: Value =
            serde_json::from_str(r#"{"bb": 1, "a": [1, 2.5, "x"], "c": {"zz": null, "y": true}}"#)
                .unwrap();
        assert_eq!(
            print(&v),
            r#"{"a": [1, 2.5, "x"], "c": {"y": true, "zz": null}, "bb": 1}"#
        );
    }

    #[test]
    fn paths_parse_and_refuse() {
        assert_eq!(
            parse_path(br#"$.a[2]."b c"[last - 1][*].*"#).unwrap(),
            vec![
                Leg::Key("a".into()),
                Leg::Index(2),
                Leg::Key("b c".into()),
                Leg::FromLast(1),
                Leg::AnyIndex,
                Leg::AnyKey
            ]
        );
        for bad in ["a", "$.", "$[x]", "$.1a", "$[1"] {
            assert_eq!(
                parse_path(bad.as_bytes()).unwrap_err().code(),
                3143,
                "{bad}"
            );
        }
    }

    #[test]
    fn changes_follow_mysql() {
        let doc = s(r#"{"a": 1, "b": [2, 3]}"#);
        let run = |f, args: &[Datum]| text(eval(f, args).unwrap());
        let one = s("1");
        assert_eq!(
            run(
                JsonFunc::Set,
                &[doc.clone(), s("$.a"), s("10"), s("$.c"), s("[true]")]
            ),
            r#"{"a": 10, "b": [2, 3], "c": [true]}"#
        );
        assert_eq!(
            run(
                JsonFunc::Insert,
                &[doc.clone(), s("$.a"), s("10"), s("$.b[5]"), one.clone()]
            ),
            r#"{"a": 1, "b": [2, 3, 1]}"#
        );
        assert_eq!(
            run(
                JsonFunc::Replace,
                &[doc.clone(), s("$.a"), s("10"), s("$.c"), one.clone()]
            ),
            r#"{"a": 10, "b": [2, 3]}"#
        );
        assert_eq!(
            run(JsonFunc::Remove, &[doc.clone(), s("$.b[0]")]),
            r#"{"a": 1, "b": [3]}"#
        );
        assert_eq!(
            run(JsonFunc::ArrayAppend, &[doc.clone(), s("$.a"), s("2")]),
            r#"{"a": [1, 2], "b": [2, 3]}"#
        );
        assert_eq!(
            run(JsonFunc::Set, &[s(r#""x""#), s("$[1]"), s(r#""y""#)]),
            r#"["x", "y"]"#
        );
        assert_eq!(
            eval(JsonFunc::Remove, &[doc, s("$")]).unwrap_err().code(),
            3153
        );
    }

    #[test]
    fn containment_and_merges() {
        let c = |a: &str, b: &str| eval(JsonFunc::Contains, &[s(a), s(b)]).unwrap();
        assert_eq!(
            c(r#"{"a": 1, "b": 2, "c": {"d": 4}}"#, r#"{"c": {"d": 4}}"#),
            Datum::Int(1)
        );
        assert_eq!(c("[1, 2, [3, 4]]", "[1, 3]"), Datum::Int(1));
        assert_eq!(c("[1, 2]", "[1, 5]"), Datum::Int(0));
        assert_eq!(c("1.0", "1"), Datum::Int(1));
        let m = |f, a: &str, b: &str| text(eval(f, &[s(a), s(b)]).unwrap());
        assert_eq!(m(JsonFunc::MergePreserve, "[1, 2]", "true"), "[1, 2, true]");
        assert_eq!(
            m(JsonFunc::MergePreserve, r#"{"a": 1}"#, r#"{"a": 2}"#),
            r#"{"a": [1, 2]}"#
        );
        assert_eq!(
            m(
                JsonFunc::MergePatch,
                r#"{"a": 1, "b": 2}"#,
                r#"{"a": 3, "b": null}"#
            ),
            r#"{"a": 3}"#
        );
    }
}
