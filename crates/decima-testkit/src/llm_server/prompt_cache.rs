//! The server's model of the providers' prompt caches, so a test can assert on the cache share a
//! client achieves rather than on the client's own idea of it.
//!
//! Each request is cut into the segments a provider renders in order, and a segment counts one
//! token per four bytes of its JSON:
//! - Anthropic: the tools, the system (a string, or each of its blocks), then every content
//!   block of every message. It caches only where a block carries `cache_control`: a request
//!   reads the longest prefix, at a breakpoint or up to 20 blocks before one, that an earlier
//!   request wrote, and writes the prefix up to its last breakpoint. Prefixes under 1,024 tokens
//!   are never cached, as Anthropic documents.
//! - OpenAI-compatible: the tools, then every message. It caches on its own: the longest prefix
//!   shared with an earlier request of the same `prompt_cache_key` (or of any request without
//!   one) is read, counted in steps of 128 tokens from 1,024 on, as OpenAI documents. Nothing is
//!   reported as written.
//!
//! `cache_control` itself is not content, so it is left out of a segment's bytes.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::Protocol;

/// No provider caches a shorter prefix.
pub const MIN_CACHED_TOKENS: u32 = 1024;
/// OpenAI counts cache hits in steps of this many tokens.
const OPENAI_STEP: u32 = 128;
/// How far back from a breakpoint Anthropic looks for an earlier write.
const LOOKBACK_BLOCKS: usize = 20;

/// What the model says one request cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheUsage {
    /// Every token of the request.
    pub prompt: u32,
    /// Of them, read from the cache.
    pub read: u32,
    /// Of them, written to the cache.
    pub written: u32,
}

/// The cache's state across requests. The server keeps one (see
/// [`super::LlmServer::model_prompt_caches`]); a benchmark can also replay request bodies
/// through one of its own.
#[derive(Debug, Default)]
pub struct PromptCacheModel {
    /// Anthropic: hashes of the prefixes written at breakpoints.
    written: HashSet<u64>,
    /// OpenAI: the rendered prompts seen, per cache key ("" without one).
    seen: HashMap<String, Vec<Vec<u8>>>,
}

/// One rendered piece of a request.
struct Segment {
    bytes: Vec<u8>,
    breakpoint: bool,
}

impl Segment {
    fn of(value: &Value) -> Self {
        let breakpoint = value.get("cache_control").is_some();
        let bytes = match value {
            Value::Object(map) if breakpoint => {
                let mut map = map.clone();
                map.remove("cache_control");
                Value::Object(map).to_string().into_bytes()
            }
            other => other.to_string().into_bytes(),
        };
        Self { bytes, breakpoint }
    }

    fn tagged(tag: &str, value: &Value) -> Self {
        let mut segment = Self::of(value);
        let mut bytes = tag.as_bytes().to_vec();
        bytes.append(&mut segment.bytes);
        segment.bytes = bytes;
        segment
    }

    fn tokens(&self) -> u32 {
        u32::try_from(self.bytes.len().div_ceil(4)).unwrap_or(u32::MAX)
    }
}

impl PromptCacheModel {
    /// The usage of a request with body `json`, and what it leaves in the cache.
    pub(crate) fn serve(&mut self, protocol: Protocol, json: &Value) -> CacheUsage {
        match protocol {
            Protocol::Anthropic => self.serve_anthropic(json),
            Protocol::OpenAi => self.serve_openai(json),
        }
    }

    /// The usage of an Anthropic Messages request body.
    pub fn serve_anthropic(&mut self, json: &Value) -> CacheUsage {
        let mut segments: Vec<Segment> = Vec::new();
        for tool in array(json, "tools") {
            segments.push(Segment::of(tool));
        }
        match json.get("system") {
            Some(Value::Array(blocks)) => segments.extend(blocks.iter().map(Segment::of)),
            Some(system @ Value::String(_)) => segments.push(Segment::of(system)),
            _ => {}
        }
        for message in array(json, "messages") {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("");
            match message.get("content") {
                Some(Value::Array(blocks)) => {
                    segments.extend(blocks.iter().map(|b| Segment::tagged(role, b)));
                }
                Some(text) => segments.push(Segment::tagged(role, text)),
                None => {}
            }
        }
        // Prefix k holds segments[..k].
        let mut hashes = vec![0u64];
        let mut tokens = vec![0u32];
        let mut hasher = DefaultHasher::new();
        for s in &segments {
            s.bytes.hash(&mut hasher);
            hashes.push(hasher.finish());
            tokens.push(tokens[tokens.len() - 1].saturating_add(s.tokens()));
        }
        let breakpoints: Vec<usize> = segments
            .iter()
            .enumerate()
            .filter(|(_, s)| s.breakpoint)
            .map(|(i, _)| i + 1)
            .collect();
        let cacheable = |k: usize| tokens[k] >= MIN_CACHED_TOKENS;
        let read_at = breakpoints
            .iter()
            .flat_map(|&b| (b.saturating_sub(LOOKBACK_BLOCKS - 1).max(1)..=b).rev())
            .filter(|&k| cacheable(k) && self.written.contains(&hashes[k]))
            .max()
            .unwrap_or(0);
        let write_to = breakpoints
            .iter()
            .copied()
            .filter(|&b| cacheable(b))
            .max()
            .unwrap_or(0);
        for &b in breakpoints.iter().filter(|&&b| cacheable(b)) {
            self.written.insert(hashes[b]);
        }
        let read = tokens[read_at];
        CacheUsage {
            prompt: tokens[segments.len()],
            read,
            written: tokens[write_to].saturating_sub(read),
        }
    }

    /// The usage of an OpenAI chat-completions request body.
    pub fn serve_openai(&mut self, json: &Value) -> CacheUsage {
        let mut prompt: Vec<u8> = Vec::new();
        for value in array(json, "tools").chain(array(json, "messages")) {
            prompt.extend(value.to_string().into_bytes());
        }
        let key = json
            .get("prompt_cache_key")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let seen = self.seen.entry(key).or_default();
        let shared = seen
            .iter()
            .map(|earlier| {
                earlier
                    .iter()
                    .zip(&prompt)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        seen.push(prompt.clone());
        let total = u32::try_from(prompt.len().div_ceil(4)).unwrap_or(u32::MAX);
        let shared = u32::try_from(shared / 4).unwrap_or(u32::MAX);
        let read = if shared >= MIN_CACHED_TOKENS {
            shared - shared % OPENAI_STEP
        } else {
            0
        };
        CacheUsage {
            prompt: total,
            read,
            written: 0,
        }
    }
}

fn array<'a>(json: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> + Clone {
    json.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn long(tag: &str) -> String {
        format!("{tag} {}", "lorem ipsum dolor ".repeat(300))
    }

    #[test]
    fn anthropic_reads_what_an_earlier_breakpoint_wrote_and_only_that() {
        let mut model = PromptCacheModel::default();
        let system = json!([{ "type": "text", "text": long("sys"), "cache_control": { "type": "ephemeral" } }]);
        let first = json!({
            "system": system,
            "messages": [{ "role": "user", "content": [
                { "type": "text", "text": long("q1"), "cache_control": { "type": "ephemeral" } }
            ]}]
        });
        let one = model.serve(Protocol::Anthropic, &first);
        assert_eq!(one.read, 0);
        assert_eq!(
            one.written, one.prompt,
            "everything up to the last breakpoint"
        );
        // The same prefix, one more turn, the breakpoint moved to the end.
        let second = json!({
            "system": system,
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": long("q1") }] },
                { "role": "assistant", "content": [{ "type": "text", "text": "ok" }] },
                { "role": "user", "content": [
                    { "type": "text", "text": long("q2"), "cache_control": { "type": "ephemeral" } }
                ]}
            ]
        });
        let two = model.serve(Protocol::Anthropic, &second);
        assert_eq!(
            two.read, one.prompt,
            "the first request's prefix, found by lookback"
        );
        assert_eq!(two.read + two.written, two.prompt);
        // Without breakpoints nothing is read or written, however much repeats.
        let mut plain = second.clone();
        plain["system"] = json!(long("sys"));
        plain["messages"][2]["content"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        let three = model.serve(Protocol::Anthropic, &plain);
        assert_eq!((three.read, three.written), (0, 0));
    }

    #[test]
    fn openai_reads_the_shared_prefix_in_steps_from_1024_tokens() {
        let mut model = PromptCacheModel::default();
        let a = json!({ "messages": [{ "role": "system", "content": long("sys") }, { "role": "user", "content": "a" }] });
        let b = json!({ "messages": [{ "role": "system", "content": long("sys") }, { "role": "user", "content": "b" }] });
        assert_eq!(model.serve(Protocol::OpenAi, &a).read, 0);
        let second = model.serve(Protocol::OpenAi, &b);
        assert!(second.read >= MIN_CACHED_TOKENS, "{second:?}");
        assert_eq!(second.read % OPENAI_STEP, 0);
        assert!(second.read < second.prompt);
        // A short shared prefix is not cached; another key does not share.
        let short = json!({ "messages": [{ "role": "user", "content": "b" }] });
        assert_eq!(model.serve(Protocol::OpenAi, &short).read, 0);
        let mut keyed = b.clone();
        keyed["prompt_cache_key"] = json!("other");
        assert_eq!(model.serve(Protocol::OpenAi, &keyed).read, 0);
    }
}
