//! A tool result as a model can read it. MCP results are a list of content blocks plus optional
//! structured content; a model's tool result is text (and, for some providers, images). Text
//! stays text; an image is kept whole for whoever can show or save it, and named in the text;
//! an embedded resource becomes its text (or a line naming its binary); a resource link
//! becomes its URI; `structuredContent` becomes JSON unless a text block already says the
//! same; `isError` marks the call failed.
//!
//! The result is read as JSON, not through the SDK's types, so a block of a kind this version
//! does not know still reaches the model as a line saying what it was.

use base64::Engine as _;
use serde_json::Value;

/// An image a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpImage {
    /// Its media type, e.g. `image/png`.
    pub mime: String,
    /// Its bytes, decoded.
    pub data: Vec<u8>,
}

/// What a call gave back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpOutput {
    /// Everything readable, in the order the server gave it.
    pub text: String,
    /// Images, in order; the text names each as `[image N: …]`.
    pub images: Vec<McpImage>,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
}

/// How the text names image `n` (from 1) where the result had it: its type, its size, and
/// where it was saved once it is. The text keeps one marker per image, so whoever saves it
/// replaces the marker with the one that says where.
pub fn image_marker(n: usize, mime: &str, bytes: usize, saved: Option<&str>) -> String {
    match saved {
        Some(note) => format!("[image {n}: {mime}, {bytes} bytes, {note}]"),
        None => format!("[image {n}: {mime}, {bytes} bytes]"),
    }
}

/// Reads a `tools/call` result.
pub fn read_result(result: &Value) -> McpOutput {
    let mut out = McpOutput {
        is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
        ..McpOutput::default()
    };
    let mut parts: Vec<String> = Vec::new();
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => parts.push(field("text").to_owned()),
            "image" => {
                let mime = field("mimeType").to_owned();
                match base64::engine::general_purpose::STANDARD.decode(field("data")) {
                    Ok(data) => {
                        out.images.push(McpImage {
                            mime: mime.clone(),
                            data,
                        });
                        let n = out.images.len();
                        parts.push(image_marker(n, &mime, out.images[n - 1].data.len(), None));
                    }
                    Err(_) => parts.push(format!("[an image ({mime}) whose data was not base64]")),
                }
            }
            "audio" => {
                let len = field("data").len() / 4 * 3;
                parts.push(format!(
                    "[audio: {}, about {len} bytes; not shown]",
                    field("mimeType")
                ));
            }
            "resource" => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                let get = |k: &str| resource.get(k).and_then(Value::as_str);
                let uri = get("uri").unwrap_or("");
                match (get("text"), get("blob")) {
                    (Some(text), _) => parts.push(format!("[resource {uri}]\n{text}")),
                    (None, Some(blob)) => parts.push(format!(
                        "[resource {uri}: {}, about {} bytes of binary; not shown]",
                        get("mimeType").unwrap_or("application/octet-stream"),
                        blob.len() / 4 * 3
                    )),
                    (None, None) => parts.push(format!("[resource {uri}]")),
                }
            }
            "resource_link" => {
                let mut line = format!("[resource link] {}", field("uri"));
                let name = field("name");
                if !name.is_empty() {
                    line.push_str(&format!(" ({name})"));
                }
                let description = field("description");
                if !description.is_empty() {
                    line.push_str(&format!(": {description}"));
                }
                parts.push(line);
            }
            other => parts.push(format!(
                "[a content block of type {:?} that Decima does not read]",
                decima_core::names::echo_untrusted(other)
            )),
        }
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let said = blocks.iter().any(|b| {
            b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .is_some_and(|v| &v == structured)
        });
        if !said {
            parts.push(format!("structured content: {structured}"));
        }
    }
    out.text = parts.join("\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_block_reaches_the_text() {
        let r = json!({"content": [
            {"type": "text", "text": "Here:"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "resource", "resource": {"uri": "demo://r/1", "mimeType": "text/plain", "text": "body"}},
            {"type": "resource", "resource": {"uri": "demo://r/2", "mimeType": "application/zip", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "demo://r/3", "name": "Three", "description": "the third"},
            {"type": "hologram"}
        ]});
        let out = read_result(&r);
        assert!(!out.is_error);
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.images[0].mime, "image/png");
        assert_eq!(out.images[0].data[..4], [0x89, b'P', b'N', b'G']);
        for needle in [
            "Here:",
            "[image 1: image/png, 8 bytes]",
            "[resource demo://r/1]\nbody",
            "demo://r/2: application/zip",
            "[resource link] demo://r/3 (Three): the third",
            "\"hologram\"",
        ] {
            assert!(
                out.text.contains(needle),
                "{needle} missing from {}",
                out.text
            );
        }
    }

    #[test]
    fn structured_content_is_added_once() {
        let same = json!({"content": [{"type": "text", "text": "{\"t\": 36}"}],
                          "structuredContent": {"t": 36}});
        assert_eq!(read_result(&same).text, "{\"t\": 36}");
        let only = json!({"content": [], "structuredContent": {"t": 36}});
        assert_eq!(read_result(&only).text, "structured content: {\"t\":36}");
    }

    #[test]
    fn is_error_marks_the_call_failed() {
        let r = json!({"content": [{"type": "text", "text": "bad input"}], "isError": true});
        let out = read_result(&r);
        assert!(out.is_error);
        assert_eq!(out.text, "bad input");
    }
}
