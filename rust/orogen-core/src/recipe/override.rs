//! `--set PATH=VALUE` overrides on a recipe.
//!
//! The recipe goes through a JSON tree (serde's data model, which keeps enum variant
//! names), the addressed node is replaced by VALUE (parsed as RON), and the tree is
//! deserialised back into a recipe, so a value of the wrong type is an error naming PATH.

use serde_json::Value as Json;

use crate::error::{OrogenError, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One step of a path: a field name or an index into a list.
enum Segment {
    Field(String),
    Index(usize),
}

fn parse_path(path: &str) -> std::result::Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Segment::Field(name.to_string()));
        } else if rest.is_empty() {
            return Err("empty path segment".into());
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("missing `]` in `{part}`"))?;
            let idx: usize = rest[1..close]
                .trim()
                .parse()
                .map_err(|_| format!("`{}` is not a list index", &rest[1..close]))?;
            out.push(Segment::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected `{rest}` after an index"));
            }
        }
    }
    Ok(out)
}

/// An enum variant in serde's JSON form is an object with one capitalised key.
fn variant_inner(node: &mut Json) -> Option<&mut Json> {
    match node {
        Json::Object(map) if map.len() == 1 => {
            let key = map.keys().next()?.clone();
            if key.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                map.get_mut(&key)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The node `seg` addresses under `node`. With `create`, a field missing from an object is
/// added (a field the recipe leaves out when empty, such as `outputs` or `strata`; an unknown
/// name is still refused when the recipe is read back).
fn descend<'a>(
    node: &'a mut Json,
    seg: &Segment,
    create: bool,
) -> std::result::Result<&'a mut Json, String> {
    match seg {
        Segment::Index(i) => {
            // `stages[0]` addresses the list element; step inside an enum wrapper if needed.
            let node = if node.is_array() {
                node
            } else {
                variant_inner(node).ok_or("is not a list")?
            };
            let len = node.as_array().map(|a| a.len()).unwrap_or(0);
            node.as_array_mut()
                .and_then(|a| a.get_mut(*i))
                .ok_or_else(|| format!("index {i} is out of range (the list has {len} items)"))
        }
        Segment::Field(name) => {
            if node.get(name.as_str()).is_some() {
                return Ok(node.get_mut(name.as_str()).expect("checked"));
            }
            // Skip over enum variant names: `terrain.octaves` reaches `terrain.Noise.octaves`.
            if variant_inner(node).is_some() {
                let inner = variant_inner(node).expect("checked");
                return descend(inner, seg, create);
            }
            match node {
                Json::Object(map) if create => Ok(map.entry(name.clone()).or_insert(Json::Null)),
                _ => Err(format!("there is no field `{name}` here")),
            }
        }
    }
}

/// A RON value in serde's JSON data model, keeping enum variant names: `Constant(5.0)` →
/// `{"Constant": 5.0}`, `Noise(min: 0.0, max: 1.0)` → `{"Noise": {"min": 0.0, "max": 1.0}}`,
/// a unit variant `Carve` → `"Carve"`, `None` → null, `Some(x)` → x, a struct `(a: 1)` → an
/// object, a tuple `(1, 2)` or list `[1, 2]` → an array. (`ron::Value` drops variant names,
/// so a value of enum type could not be set through it.)
fn ron_to_json(text: &str) -> std::result::Result<Json, String> {
    ron_to_json_nan(text, false)
}

/// [`ron_to_json`], with `nan` true reading a bare `NaN` as the text "NaN" (what a field
/// that takes NaN, `nodata`, reads) instead of refusing it.
fn ron_to_json_nan(text: &str, nan: bool) -> std::result::Result<Json, String> {
    let t = text.trim();
    let mut p = RonParser {
        s: t.as_bytes(),
        i: 0,
        depth: 0,
        nan,
    };
    let v = p
        .value()
        .and_then(|v| {
            p.skip_ws();
            if p.i < p.s.len() {
                Err(format!("unexpected `{}`", p.rest()))
            } else {
                Ok(v)
            }
        })
        .map_err(|e| format!("`{t}` is not a RON value: {e}"))?;
    Ok(v)
}

/// A small recursive-descent reader for the RON values an override can hold.
struct RonParser<'a> {
    s: &'a [u8],
    i: usize,
    /// Brackets open around the current position (at most [`MAX_DEPTH`]).
    depth: usize,
    /// Whether a bare `NaN` reads as the text "NaN" (else it is refused).
    nan: bool,
}

/// Deepest nesting of `( … )` and `[ … ]` in a value; a recipe needs a handful, and the
/// reader recurses once per level (100 000 `[` overflowed the stack).
const MAX_DEPTH: usize = 64;

impl RonParser<'_> {
    fn rest(&self) -> String {
        crate::error::shorten(&String::from_utf8_lossy(&self.s[self.i..]))
    }

    fn skip_ws(&mut self) {
        loop {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.s[self.i..].starts_with(b"//") {
                while self.i < self.s.len() && self.s[self.i] != b'\n' {
                    self.i += 1;
                }
            } else {
                return;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn ident(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn value(&mut self) -> std::result::Result<Json, String> {
        match self.peek() {
            None => Err("no value".into()),
            Some(b'"') => self.string(),
            Some(b'[') => {
                self.i += 1;
                let items = self.items(b']')?;
                if items.iter().any(|(k, _)| k.is_some()) {
                    return Err("a list cannot have named fields".into());
                }
                Ok(Json::Array(items.into_iter().map(|(_, v)| v).collect()))
            }
            Some(b'(') => {
                self.i += 1;
                let items = self.items(b')')?;
                Ok(Self::group(items))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' => self.number(),
            Some(b'r') if self.s[self.i..].starts_with(b"r#") => {
                // A raw identifier (`r#None`): always a variant name.
                self.i += 2;
                Ok(Json::String(self.ident()))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self.ident();
                let inner = if self.peek() == Some(b'(') {
                    self.i += 1;
                    Some(self.items(b')')?)
                } else {
                    None
                };
                match (name.as_str(), inner) {
                    ("true", None) => Ok(Json::Bool(true)),
                    ("false", None) => Ok(Json::Bool(false)),
                    ("None", None) => Ok(Json::Null),
                    ("NaN" | "nan", None) if self.nan => Ok(Json::String("NaN".into())),
                    ("NaN" | "nan" | "inf" | "infinity" | "Infinity", None) => {
                        Err("not a finite number".into())
                    }
                    (_, None) => Ok(Json::String(name)),
                    ("Some", Some(mut items)) if items.len() == 1 && items[0].0.is_none() => {
                        Ok(items.remove(0).1)
                    }
                    // `Fill()`: a struct variant with every field at its default. serde
                    // reads a struct variant from an object only (an empty list was refused,
                    // though the same text is valid in a recipe file: fuzz finding #39.7);
                    // a newtype variant of a struct reads `{}` as well.
                    (_, Some(items)) if items.is_empty() => {
                        let mut map = serde_json::Map::new();
                        map.insert(name, Json::Object(serde_json::Map::new()));
                        Ok(Json::Object(map))
                    }
                    (_, Some(items)) => {
                        let mut map = serde_json::Map::new();
                        map.insert(name, Self::group(items));
                        Ok(Json::Object(map))
                    }
                }
            }
            Some(_) => Err(format!("unexpected `{}`", self.rest())),
        }
    }

    /// The contents of `( … )`: named fields are a struct, one unnamed value is itself (a
    /// newtype variant's content), several are a tuple.
    fn group(mut items: Vec<(Option<String>, Json)>) -> Json {
        if !items.is_empty() && items.iter().all(|(k, _)| k.is_some()) {
            Json::Object(
                items
                    .into_iter()
                    .map(|(k, v)| (k.unwrap_or_default(), v))
                    .collect(),
            )
        } else if items.len() == 1 {
            items.remove(0).1
        } else {
            Json::Array(items.into_iter().map(|(_, v)| v).collect())
        }
    }

    /// Comma-separated values or `name: value` fields up to `close` (a trailing comma is fine).
    fn items(&mut self, close: u8) -> std::result::Result<Vec<(Option<String>, Json)>, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels deep"));
        }
        self.depth += 1;
        let out = self.items_inside(close);
        self.depth -= 1;
        out
    }

    fn items_inside(
        &mut self,
        close: u8,
    ) -> std::result::Result<Vec<(Option<String>, Json)>, String> {
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(out);
            }
            // `name:` starts a field; anything else is a value.
            let save = self.i;
            let mut key = None;
            if self
                .peek()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            {
                let name = self.ident();
                if self.peek() == Some(b':') {
                    self.i += 1;
                    key = Some(name);
                } else {
                    self.i = save;
                }
            }
            if key.is_some()
                != out
                    .first()
                    .is_some_and(|(k, _): &(Option<String>, Json)| k.is_some())
                && !out.is_empty()
            {
                return Err("named fields and plain values are mixed".into());
            }
            let v = self.value()?;
            out.push((key, v));
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(format!("expected `,` or `{}`", close as char)),
            }
        }
    }

    fn number(&mut self) -> std::result::Result<Json, String> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"+-._".contains(&self.s[self.i]))
        {
            // A sign only leads or follows an exponent.
            if b"+-".contains(&self.s[self.i])
                && self.i > start
                && !b"eE".contains(&self.s[self.i - 1])
            {
                break;
            }
            self.i += 1;
        }
        let raw = String::from_utf8_lossy(&self.s[start..self.i]).replace('_', "");
        let body = raw.trim_start_matches(['+', '-']);
        if matches!(body, "NaN" | "nan" | "inf" | "infinity" | "Infinity") {
            return Err(format!("`{raw}` is not a finite number"));
        }
        if let Ok(i) = raw.trim_start_matches('+').parse::<i64>() {
            return Ok(Json::from(i));
        }
        if let Ok(u) = raw.trim_start_matches('+').parse::<u64>() {
            return Ok(Json::from(u));
        }
        match raw.parse::<f64>() {
            Ok(f) if f.is_finite() => serde_json::Number::from_f64(f)
                .map(Json::Number)
                .ok_or_else(|| format!("`{raw}` is not a finite number")),
            _ => Err(format!("`{raw}` is not a number")),
        }
    }

    fn string(&mut self) -> std::result::Result<Json, String> {
        // A RON string is a JSON string (the same escapes).
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() && self.s[self.i] != b'"' {
            if self.s[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err("a string is not closed".into());
        }
        self.i += 1;
        let text = String::from_utf8_lossy(&self.s[start..self.i]);
        serde_json::from_str::<String>(&text)
            .map(Json::String)
            .map_err(|e| format!("bad string {text}: {e}"))
    }
}

/// Refuses a tuple or list in VALUE that became a struct: serde fills a struct from a
/// sequence by position, so `terrain.faults=(129,129)` would set `count` and `offset`
/// without naming them. `out` is the recipe read back and `given` the value as parsed.
fn check_no_positional_struct<T: Serialize>(
    out: &T,
    segments: &[Segment],
    given: &Json,
    path: &str,
) -> Result<()> {
    let Ok(mut got) = serde_json::to_value(out) else {
        return Ok(());
    };
    let mut node = &mut got;
    for seg in segments {
        match descend(node, seg, false) {
            Ok(next) => node = next,
            // Left out when serialised (an empty list, an absent option): no struct there.
            Err(_) => return Ok(()),
        }
    }
    match positional_struct(given, node, path.to_string()) {
        None => Ok(()),
        Some((at, map, first)) => {
            // The field the tuple's first value went to (the map is sorted by name, not in
            // declaration order), else any.
            let example = map
                .iter()
                .find(|(_, v)| Some(*v) == first)
                .or_else(|| map.iter().next())
                .map(|(k, v)| format!("({k}: {v}, …)"))
                .unwrap_or_else(|| "(name: value, …)".into());
            Err(OrogenError::Override {
                path: at,
                reason: format!(
                    "is a struct, and a struct needs named fields, like `{example}`; a tuple \
                     or list does not fill its fields by position"
                ),
            })
        }
    }
}

/// The first place, as a path under `at`, where `given` has a sequence and `got` a struct,
/// with that struct and the sequence's first value.
fn positional_struct<'a, 'b>(
    given: &'b Json,
    got: &'a Json,
    at: String,
) -> Option<(String, &'a serde_json::Map<String, Json>, Option<&'b Json>)> {
    match (given, got) {
        // `()` fills no field by position: a struct of defaults (`Hydrology()`).
        (Json::Array(items), Json::Object(map)) if !items.is_empty() => {
            Some((at, map, items.first()))
        }
        (Json::Array(a), Json::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| positional_struct(x, y, format!("{at}[{i}]"))),
        (Json::Object(a), Json::Object(b)) => a.iter().find_map(|(k, x)| {
            let y = b.get(k)?;
            // Variant names are skipped in paths (`terrain.faults`, not `terrain.Noise.faults`).
            let sub = if k.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                at.clone()
            } else {
                format!("{at}.{k}")
            };
            positional_struct(x, y, sub)
        }),
        _ => None,
    }
}

/// Applies `PATH=VALUE` to a copy of `recipe` (any serde value; the recipe in practice).
pub fn apply<T: Serialize + DeserializeOwned>(recipe: &T, assignment: &str) -> Result<T> {
    let (path, value) = assignment
        .split_once('=')
        .ok_or_else(|| OrogenError::Override {
            path: assignment.to_string(),
            reason: "expected PATH=VALUE, e.g. seed=7".into(),
        })?;
    let path = path.trim();
    let err = |reason: String| OrogenError::Override {
        path: path.to_string(),
        reason,
    };
    let segments = parse_path(path).map_err(err)?;
    if segments.is_empty() {
        return Err(err("empty path".into()));
    }
    let mut tree = serde_json::to_value(recipe).map_err(|e| err(e.to_string()))?;
    let mut node = &mut tree;
    for (i, seg) in segments.iter().enumerate() {
        node = descend(node, seg, i + 1 == segments.len()).map_err(err)?;
    }
    let given = match ron_to_json(value) {
        Ok(given) => given,
        // Only a field that takes NaN (`terrain.Heightmap.nodata`) reads it, as "NaN",
        // set alone or inside a larger value (`terrain=Heightmap(path: .., nodata: NaN)`
        // was refused though a recipe file takes it: found fuzzing the bake, #39); anywhere
        // else the non-finite number is refused.
        Err(e) => match ron_to_json_nan(value, true) {
            Ok(lenient) => {
                *node = lenient;
                return serde_json::from_value::<T>(tree).map_err(|_| err(e));
            }
            Err(_) => return Err(err(e)),
        },
    };
    *node = given.clone();
    match serde_json::from_value::<T>(tree.clone()) {
        Ok(out) => {
            check_no_positional_struct(&out, &segments, &given, path)?;
            Ok(out)
        }
        // A bare `None` is an absent option or, where the field is an enum, its unit variant
        // `None` (e.g. `lakes: None`).
        Err(_) if value.trim() == "None" => {
            let mut tree = tree;
            let mut node = &mut tree;
            for seg in &segments {
                node = descend(node, seg, false).map_err(err)?;
            }
            *node = Json::String("None".into());
            serde_json::from_value(tree).map_err(|e| err(e.to_string()))
        }
        // `Fill` where the variant has fields: RON needs `Fill()` there too.
        Err(e) if matches!(&given, Json::String(_)) && e.to_string().contains("unit variant") => {
            let name = value.trim();
            Err(err(format!(
                "`{name}` has fields: write `{name}()` for their defaults, or \
                 `{name}(field: value, …)` ({e})"
            )))
        }
        Err(e) => Err(err(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use crate::recipe::Recipe;

    #[test]
    fn sets_top_level_fields() {
        let r = Recipe::default_recipe();
        let r2 = r.apply_override("seed=7").unwrap();
        assert_eq!(r2.seed, 7);
        let r3 = r.apply_override("size=(513,257)").unwrap();
        assert_eq!(r3.size, (513, 257));
        assert_eq!(r3.stages, r.stages);
    }

    #[test]
    fn rejects_unknown_paths_and_bad_types() {
        let r = Recipe::default_recipe();
        let e = r.apply_override("sead=7").unwrap_err().to_string();
        assert!(e.contains("sead"), "{e}");
        let e = r
            .apply_override("terrain.octavs=7")
            .unwrap_err()
            .to_string();
        assert!(e.contains("octavs"), "{e}");
        let e = r
            .apply_override("stages[0].nope.x=7")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
        let e = r.apply_override("seed=\"seven\"").unwrap_err().to_string();
        assert!(e.contains("seed"), "{e}");
        let e = r
            .apply_override("stages[99].iterations=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("out of range"), "{e}");
        assert!(r.apply_override("seed").is_err());
        let e = r.apply_override("cell_size=NaN").unwrap_err().to_string();
        assert!(e.contains("cell_size") && e.contains("finite"), "{e}");
        let e = r.apply_override("cell_size=-inf").unwrap_err().to_string();
        assert!(e.contains("finite"), "{e}");
        let e = r.apply_override("size=(3, 4").unwrap_err().to_string();
        assert!(e.contains("size"), "{e}");
    }

    #[test]
    fn a_tuple_does_not_fill_a_struct() {
        let r = Recipe::default_recipe();
        let e = r
            .apply_override("terrain.faults=(129,129)")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`terrain.faults`")
                && e.contains("named fields")
                && e.contains("(count: 129"),
            "{e}"
        );
        // Nested inside a value too, and as a list.
        let e = r
            .apply_override("terrain=Noise(faults: [3, 2.0])")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`terrain.faults`") && e.contains("named fields"),
            "{e}"
        );
        // Named fields work; tuples still fill tuples.
        let r2 = r
            .apply_override("terrain.faults=(count: 129, offset: 129.0)")
            .unwrap();
        assert!(r2.to_ron_string().contains("count: 129"));
        assert_eq!(r.apply_override("size=(65,33)").unwrap().size, (65, 33));
        // `Name()` fills nothing by position: a stage with every field at its default.
        let r3 = r.apply_override("stages=[Hydrology(), Thermal()]").unwrap();
        assert_eq!(
            r3.stages.iter().map(|s| s.name()).collect::<Vec<_>>(),
            ["Hydrology", "Thermal"]
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let r = Recipe::default_recipe();
        let deep = format!("size={}", "[".repeat(100_000));
        let e = r.apply_override(&deep).unwrap_err().to_string();
        assert!(e.contains("nested more than 64"), "{e}");
        let deep = format!("seed={}1{}", "(".repeat(65), ")".repeat(65));
        assert!(r.apply_override(&deep).is_err());
        let nested = format!("seed={}1{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(r.apply_override(&nested).unwrap().seed, 1);
    }

    #[test]
    fn sets_fields_left_out_when_empty() {
        let r = Recipe::default_recipe();
        assert!(!r.to_ron_string().contains("outputs"));
        let r2 = r.apply_override("outputs=[\"erosion\"]").unwrap();
        assert_eq!(r2.outputs, ["erosion"]);
        let r3 = r
            .apply_override("strata=(layers: [(material: \"shale\", thickness: Constant(5.0))])")
            .unwrap();
        assert_eq!(r3.strata.unwrap().layers[0].material, "shale");
    }

    #[test]
    fn sets_enum_values_options_and_nested_blocks() {
        use crate::flow::router::SinkMode;
        use crate::recipe::{ScalarSource, Stage};
        let r = Recipe::default_recipe();
        let r2 = r
            .apply_override("stages[0].k=Constant(1.5e-5)")
            .unwrap()
            .apply_override("stages[0].tolerance=0.25")
            .unwrap()
            .apply_override("stages[0].lakes=Fill(epsilon: 0.01)")
            .unwrap()
            .apply_override("uplift=Noise(noise: (kind: Ridged, octaves: 3), min: 0.0, max: 2e-3)")
            .unwrap();
        let Stage::StreamPower(p) = &r2.stages[0] else {
            panic!("stage 0 is stream power")
        };
        assert_eq!(p.k, ScalarSource::Constant(1.5e-5));
        assert_eq!(p.tolerance, Some(0.25));
        let text = r2.to_ron_string();
        assert!(text.contains("Fill(") && text.contains("Ridged"), "{text}");
        // `None` clears an option, and is still a unit variant where the field is an enum.
        let r3 = r2.apply_override("stages[0].tolerance=None").unwrap();
        assert!(matches!(&r3.stages[0], Stage::StreamPower(p) if p.tolerance.is_none()));
        let r4 = r2.apply_override("stages[0].lakes=None").unwrap();
        assert!(matches!(&r4.stages[0], Stage::StreamPower(p) if p.lakes == SinkMode::None));
        // RON writes that variant `r#None`; read back, it is the variant again.
        let r5 = r2.apply_override("stages[0].lakes=r#None").unwrap();
        assert_eq!(r5, r4);
        assert_eq!(
            r3.apply_override("stages[0].tolerance=Some(2.0)").unwrap(),
            r3.apply_override("stages[0].tolerance=2.0").unwrap()
        );
        let e = r
            .apply_override("stages[0].k=Konstant(1.0)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("stages[0].k"), "{e}");
        let e = r
            .apply_override("stages[0].k=Constant(nan)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("finite"), "{e}");
    }
}
