//! A server's input schema as a provider will take it. Schemas are sent as the server gives
//! them (no strict mode, nothing rewritten that a provider accepts); only a root that a
//! provider refuses is completed: OpenAI-compatible servers want an object root with
//! `properties`, Anthropic's `input_schema` wants `type: object`, and both refuse `oneOf`,
//! `anyOf` and `allOf` at the root (Anthropic with "input_schema does not support oneOf, allOf,
//! or anyOf at the top level", for every request that offers the tool). Such a root is folded
//! into one object whose properties are the branches' and whose description states the
//! server's rule, which the server still checks when it is called.

use serde_json::{Map, Value, json};

/// Which provider's rules a schema must meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI's Chat Completions and the servers that copy it.
    OpenAi,
    /// Anthropic's Messages.
    Anthropic,
}

/// `schema` completed where `dialect` would refuse it.
pub fn adapt(schema: &Value, dialect: Dialect) -> Value {
    let Value::Object(root) = schema else {
        return json!({"type": "object", "properties": {}});
    };
    let mut root: Map<String, Value> = root.clone();
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            root.insert("type".into(), Value::String("object".into()));
        }
        // A root that is not an object (an array, a union) cannot be a tool's arguments:
        // the model gets an empty object to fill and the server's own validation speaks.
        Some(_) => return json!({"type": "object", "properties": {}}),
    }
    fold_combinators(&mut root);
    if dialect == Dialect::OpenAi && !matches!(root.get("properties"), Some(Value::Object(_))) {
        root.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(root)
}

/// The root combinators no provider takes.
const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// The most characters of the server's rule put in the description.
const RULE_CHARS: usize = 2_000;

/// Moves root `allOf`, `anyOf` and `oneOf` into the object itself: every branch's properties
/// are offered (the root's own win), `allOf` requires what any branch requires and the others
/// what every branch requires, and the rule itself goes into the description, so the model can
/// still meet it.
fn fold_combinators(root: &mut Map<String, Value>) {
    let mut rules = Vec::new();
    for key in COMBINATORS {
        let Some(found) = root.remove(key) else {
            continue;
        };
        let Value::Array(branches) = found else {
            continue;
        };
        let mut properties = match root.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Vec<Value> = match root.remove("required") {
            Some(Value::Array(r)) => r,
            _ => Vec::new(),
        };
        let branch_required = |b: &Value| -> Vec<Value> {
            b.get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for branch in &branches {
            if let Some(Value::Object(p)) = branch.get("properties") {
                for (name, schema) in p {
                    properties
                        .entry(name.clone())
                        .or_insert_with(|| schema.clone());
                }
            }
        }
        let added: Vec<Value> = if key == "allOf" {
            branches.iter().flat_map(branch_required).collect()
        } else {
            let mut every = branches.first().map(branch_required).unwrap_or_default();
            every.retain(|name| branches.iter().all(|b| branch_required(b).contains(name)));
            every
        };
        for name in added {
            if !required.contains(&name) {
                required.push(name);
            }
        }
        root.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            root.insert("required".into(), Value::Array(required));
        }
        let rule = Value::Array(branches).to_string();
        let rule: String = if rule.chars().count() > RULE_CHARS {
            rule.chars().take(RULE_CHARS).chain("…".chars()).collect()
        } else {
            rule
        };
        rules.push(format!("The arguments must match {key} of: {rule}"));
    }
    if rules.is_empty() {
        return;
    }
    let described = match root.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d}\n{}", rules.join("\n")),
        _ => rules.join("\n"),
    };
    root.insert("description".into(), Value::String(described));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_providers_accept_goes_as_the_server_gave_it() {
        let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                       "properties": {"a": {"type": "number"}}, "required": ["a"]});
        assert_eq!(adapt(&s, Dialect::OpenAi), s);
        assert_eq!(adapt(&s, Dialect::Anthropic), s);
    }

    #[test]
    fn an_object_without_properties_gets_them_for_openai_only() {
        let s = json!({"type": "object"});
        assert_eq!(
            adapt(&s, Dialect::OpenAi),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(adapt(&s, Dialect::Anthropic), s);
        assert_eq!(
            adapt(&json!({}), Dialect::Anthropic),
            json!({"type": "object"})
        );
        assert_eq!(
            adapt(&json!({"type": "array"}), Dialect::OpenAi),
            json!({"type": "object", "properties": {}})
        );
    }

    /// The shape real servers publish (a union of two ways to name a resource, as
    /// `zod-to-json-schema` writes a `z.union`), which Anthropic refuses at the root.
    #[test]
    fn a_root_union_becomes_one_object_that_keeps_the_rule_in_its_description() {
        let s = json!({
            "type": "object",
            "properties": {"ref": {"type": "string"}},
            "oneOf": [
                {"properties": {"id": {"type": "string"}}, "required": ["id"]},
                {"properties": {"full_path": {"type": "string"}, "ref": {"type": "number"}},
                 "required": ["full_path", "ref"]}
            ]
        });
        for dialect in [Dialect::OpenAi, Dialect::Anthropic] {
            let out = adapt(&s, dialect);
            for key in COMBINATORS {
                assert!(out.get(key).is_none(), "{out}");
            }
            assert_eq!(out["type"], "object");
            // Every branch's properties, the root's own definition kept.
            assert_eq!(out["properties"]["id"], json!({"type": "string"}));
            assert_eq!(out["properties"]["full_path"], json!({"type": "string"}));
            assert_eq!(out["properties"]["ref"], json!({"type": "string"}));
            // Nothing is required by both branches, so nothing is required.
            assert!(out.get("required").is_none(), "{out}");
            let described = out["description"].as_str().unwrap();
            assert!(described.contains("oneOf"), "{described}");
            assert!(described.contains("\"full_path\""), "{described}");
        }
    }

    #[test]
    fn all_of_requires_what_any_branch_requires_and_any_of_what_every_branch_does() {
        let all = json!({
            "description": "Moves a card.",
            "allOf": [
                {"properties": {"card": {"type": "string"}}, "required": ["card"]},
                {"properties": {"to": {"type": "string"}}, "required": ["to"]}
            ]
        });
        let out = adapt(&all, Dialect::Anthropic);
        assert_eq!(out["required"], json!(["card", "to"]));
        assert!(
            out["description"]
                .as_str()
                .unwrap()
                .starts_with("Moves a card.\n")
        );
        let any = json!({
            "type": "object",
            "required": ["board"],
            "anyOf": [
                {"required": ["card", "to"]},
                {"required": ["to", "column"]}
            ]
        });
        let out = adapt(&any, Dialect::OpenAi);
        assert_eq!(out["required"], json!(["board", "to"]));
        assert_eq!(out["properties"], json!({}));
    }
}
