//! A server's input schema as a provider will take it. Schemas are sent as the server gives
//! them (no strict mode, nothing rewritten that a provider accepts); only a root that a
//! provider refuses is completed: OpenAI-compatible servers want an object root with
//! `properties`, Anthropic's `input_schema` wants `type: object`.

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
    if dialect == Dialect::OpenAi && !matches!(root.get("properties"), Some(Value::Object(_))) {
        root.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(root)
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
}
