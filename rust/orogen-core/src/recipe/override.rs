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

fn descend<'a>(node: &'a mut Json, seg: &Segment) -> std::result::Result<&'a mut Json, String> {
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
            match variant_inner(node) {
                Some(inner) => descend(inner, seg),
                None => Err(format!("there is no field `{name}` here")),
            }
        }
    }
}

fn ron_to_json(text: &str) -> std::result::Result<Json, String> {
    let t = text.trim();
    let bare = t.trim_start_matches(['+', '-']);
    if matches!(bare, "NaN" | "nan" | "inf" | "infinity" | "Infinity") {
        return Err(format!("`{t}` is not a finite number"));
    }
    // A bare identifier is a unit enum variant (`Carve`) or a boolean.
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        if t == "true" || t == "false" {
            return Ok(Json::Bool(t == "true"));
        }
        if t.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            return Ok(Json::String(t.to_string()));
        }
    }
    let value: ron::Value =
        ron::from_str(t).map_err(|e| format!("`{t}` is not a RON value: {e}"))?;
    serde_json::to_value(&value).map_err(|e| format!("`{t}` cannot be used here: {e}"))
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
    for seg in &segments {
        node = descend(node, seg).map_err(err)?;
    }
    *node = ron_to_json(value).map_err(err)?;
    let out: T = serde_json::from_value(tree).map_err(|e| err(e.to_string()))?;
    Ok(out)
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
    }
}
