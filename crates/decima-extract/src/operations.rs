//! Tool operations: the line a call becomes (its key argument) and the exit code its result
//! reports, the grouping of near-identical operations into one row by shape, and the rendering
//! of an operation line and its parsing back.

use std::collections::{BTreeMap, HashMap};

use super::text::{one_line, truncate};
use super::{Digest, LINE_CHARS, Operation};

const KEY_ARGS: [&str; 8] = [
    "cmd",
    "command",
    "path",
    "file",
    "file_path",
    "url",
    "query",
    "pattern",
];

/// Groups of more near-identical commands than this become one line with `*` (and groups of
/// more decision or constraint sentences of one shape, one line with the newest).
pub(super) const MAX_VARIANT_LINES: u64 = 3;

impl Operation {
    pub(super) fn tool(&self) -> &str {
        self.line.split_whitespace().next().unwrap_or("tool")
    }

    pub(super) fn render_line(&self) -> String {
        let mut out = format!("- {}", one_line(&self.line));
        if self.count > 1 {
            out.push_str(&format!(" ×{}", self.count));
        }
        if self.variants > 1 {
            out.push_str(&format!(" ({} variants)", self.variants));
        }
        if !self.exits.is_empty() {
            out.push_str(" → exit ");
            let only_code = self.exits.len() == 1 && self.exits.values().all(|&n| n == self.count);
            if only_code {
                out.push_str(self.exits.keys().next().map_or("", String::as_str));
            } else {
                let parts: Vec<String> =
                    self.exits.iter().map(|(c, n)| format!("{c}×{n}")).collect();
                out.push_str(&parts.join(", "));
            }
        }
        out.push('\n');
        out
    }

    /// Parses a line written by [`Operation::render_line`] (without the bullet), or an older
    /// `line → exit N` line.
    pub(super) fn parse_line(item: &str, last_seen: u64) -> Operation {
        let (head, exit) = match item.rsplit_once(" → exit ") {
            Some((h, e)) => (h, Some(e)),
            None => (item, None),
        };
        let (head, variants) = match head
            .strip_suffix(" variants)")
            .and_then(|h| h.rsplit_once(" ("))
        {
            Some((h, v)) => match v.parse::<u64>() {
                Ok(v) => (h, v.max(1)),
                Err(_) => (head, 1),
            },
            None => (head, 1),
        };
        let (line, count) = match head.rsplit_once(" ×") {
            Some((h, n)) => match n.parse::<u64>() {
                Ok(n) => (h, n.max(1)),
                Err(_) => (head, 1),
            },
            None => (head, 1),
        };
        let mut exits = BTreeMap::new();
        if let Some(e) = exit {
            let parts: Vec<&str> = e.split(", ").collect();
            if parts.len() == 1 && !parts[0].contains('×') {
                exits.insert(parts[0].trim().to_string(), count);
            } else {
                for p in parts {
                    match p.rsplit_once('×') {
                        Some((code, n)) => {
                            exits.insert(code.to_string(), n.parse().unwrap_or(1));
                        }
                        None => {
                            exits.insert(p.to_string(), 1);
                        }
                    }
                }
            }
        }
        Operation {
            line: line.to_string(),
            count,
            variants,
            exits,
            first_lines: Vec::new(),
            last_seen,
        }
    }
}

impl Digest {
    /// The operations as rendered rows: an exact command per row, or one row with `*` for a
    /// group of more than [`MAX_VARIANT_LINES`] near-identical commands.
    pub(super) fn op_rows(&self) -> Vec<OpRow> {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (i, op) in self.operations.iter().enumerate() {
            let shape = shape_of(&op.line);
            match at.get(&shape) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    at.insert(shape.clone(), groups.len());
                    groups.push((shape, vec![i]));
                }
            }
        }
        let mut rows = Vec::new();
        for (shape, members) in groups {
            let variants: u64 = members.iter().map(|&i| self.operations[i].variants).sum();
            if variants <= MAX_VARIANT_LINES {
                for i in members {
                    rows.push(OpRow {
                        key: i as u64,
                        shape: shape.clone(),
                        op: self.operations[i].clone(),
                        members: vec![i],
                    });
                }
                continue;
            }
            let mut op = Operation {
                line: shape.clone(),
                count: 0,
                variants,
                exits: BTreeMap::new(),
                first_lines: Vec::new(),
                last_seen: 0,
            };
            for &i in &members {
                let m = &self.operations[i];
                op.count += m.count;
                op.last_seen = op.last_seen.max(m.last_seen);
                for (code, n) in &m.exits {
                    *op.exits.entry(code.clone()).or_default() += n;
                }
            }
            rows.push(OpRow {
                key: members.first().copied().unwrap_or(0) as u64,
                shape,
                op,
                members,
            });
        }
        rows.sort_by_key(|r| r.key);
        rows
    }
}

pub(super) struct OpRow {
    pub(super) key: u64,
    pub(super) shape: String,
    pub(super) op: Operation,
    /// The operations it stands for.
    pub(super) members: Vec<usize>,
}

/// The shape of an operation line: digit runs and long hex runs become `*`, so commands that
/// differ only in numbers, ids or hashes group together.
pub(super) fn shape_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.is_empty() {
            return;
        }
        let hexy = run.len() >= 7
            && run.bytes().all(|b| b.is_ascii_hexdigit())
            && run.bytes().any(|b| b.is_ascii_digit());
        if hexy {
            out.push('*');
        } else {
            let mut in_digits = false;
            for c in run.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('*');
                    }
                    in_digits = true;
                } else {
                    out.push(c);
                    in_digits = false;
                }
            }
        }
        run.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

pub(super) fn exit_code(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let pos = lower.find("exit")?;
    let rest = &lower[pos + 4..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    if start > 12 {
        return None;
    }
    let digits: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let neg = rest[..start].ends_with('-');
    Some(if neg { format!("-{digits}") } else { digits })
}

/// The first of [`KEY_ARGS`] an argument object has, with its value, read without building the
/// other values; `None` when it has none of them (or is not an object).
fn known_key(arguments: &str) -> Option<(usize, serde_json::Value)> {
    struct Pick;
    impl<'de> serde::de::Visitor<'de> for Pick {
        type Value = Option<(usize, serde_json::Value)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut best: Option<(usize, serde_json::Value)> = None;
            while let Some(key) = map.next_key::<String>()? {
                match KEY_ARGS.iter().position(|k| *k == key) {
                    Some(i) if best.as_ref().is_none_or(|(b, _)| i < *b) => {
                        best = Some((i, map.next_value()?));
                    }
                    _ => {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
            }
            Ok(best)
        }
    }
    let mut de = serde_json::Deserializer::from_str(arguments);
    let picked = serde::Deserializer::deserialize_map(&mut de, Pick).ok()?;
    de.end().ok()?;
    picked
}

/// `cmd=...`, `path=...` or the first argument; raw text when the arguments are not JSON.
pub(super) fn key_argument(arguments: &str) -> String {
    if let Some((i, v)) = known_key(arguments) {
        return match v {
            serde_json::Value::String(s) => {
                format!("{}={}", KEY_ARGS[i], truncate(&one_line(&s), LINE_CHARS))
            }
            v => format!("{}={}", KEY_ARGS[i], truncate(&v.to_string(), LINE_CHARS)),
        };
    }
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => {
            let pick = KEY_ARGS
                .iter()
                .find_map(|k| map.get(*k).map(|v| (k.to_string(), v)))
                .or_else(|| map.iter().next().map(|(k, v)| (k.clone(), v)));
            match pick {
                Some((k, serde_json::Value::String(s))) => {
                    format!("{k}={}", truncate(&one_line(s), LINE_CHARS))
                }
                Some((k, v)) => format!("{k}={}", truncate(&v.to_string(), LINE_CHARS)),
                None => String::new(),
            }
        }
        _ => truncate(&one_line(arguments), LINE_CHARS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Detail, Source, Speaker, src};
    use crate::{EstimateCounter, ToolCall};

    #[test]
    fn repeated_operations_are_grouped_and_do_not_eat_the_budget() {
        let mut msgs: Vec<(ToolCall, String)> = Vec::new();
        for i in 0..2_000 {
            let cmd = if i % 2 == 0 {
                "grep -c ERROR app.log".to_string()
            } else {
                format!("wc -l /data/exports/part-{i:05}.csv")
            };
            msgs.push((
                ToolCall {
                    id: format!("c{i}"),
                    name: "shell".into(),
                    arguments: serde_json::json!({ "cmd": cmd }).to_string(),
                },
                format!("exit code {}\n{}", i % 7 / 6, 400 + i),
            ));
        }
        let mut sources = vec![src(Speaker::User, "Goal: count errors. Threshold 0.8375.")];
        for (c, out) in &msgs {
            sources.push(Source {
                role: Speaker::Assistant,
                content: "",
                tool_calls: std::slice::from_ref(c),
                tool_call_id: None,
                seq: None,
            });
            sources.push(Source {
                role: Speaker::Tool,
                content: out,
                tool_calls: &[],
                tool_call_id: Some(&c.id),
                seq: None,
            });
        }
        sources.push(src(
            Speaker::Assistant,
            "Found the culprit at https://ci.example.com/run/77.",
        ));
        let d = Digest::from_sources(sources);
        let text = d.render(Detail::Deep);
        assert!(
            text.contains("- shell cmd=grep -c ERROR app.log ×1000 → exit 0×857, 1×143"),
            "{text}"
        );
        assert!(text.contains("shell cmd=wc -l /data/exports/part-*.csv ×1000 (1000 variants)"));
        let (small, tokens) = d.render_budgeted(Detail::Deep, 400, &EstimateCounter);
        assert!(tokens <= 400);
        for keep in [
            "0.8375",
            "https://ci.example.com/run/77",
            "grep -c ERROR app.log ×1000",
        ] {
            assert!(small.contains(keep), "{keep} lost in\n{small}");
        }
        assert!(small.contains("- folded literals: path×"), "{small}");
    }
}
