//! The execution step history (the ExecutionHistoryManager of the original design): step records
//! in a window, the oldest batch summarised with the extract strategy when the window is full.

use serde::{Deserialize, Serialize};

use crate::Role;
use crate::context::extract::{Detail, Digest, Source};

/// What a step record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// The agent's reading of the situation.
    Analysis,
    /// What it did (a tool call, an answer).
    Action,
    /// A supervisor's check of the action.
    Supervision,
}

impl StepKind {
    fn as_str(self) -> &'static str {
        match self {
            StepKind::Analysis => "analysis",
            StepKind::Action => "action",
            StepKind::Supervision => "supervision",
        }
    }
}

/// One record of an execution step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step number.
    pub step: u32,
    /// Analysis, action or supervision.
    pub kind: StepKind,
    /// The text of the record.
    pub content: String,
}

/// Keeps the last `window` step records in detail and summarises the oldest `batch` of them when
/// the window is full, so step prompts stay bounded without losing goals, decisions or literals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionHistoryManager {
    window: usize,
    batch: usize,
    summary: Option<Digest>,
    summarised: usize,
    records: Vec<StepRecord>,
}

impl Default for ExecutionHistoryManager {
    fn default() -> Self {
        Self::new(5, 3)
    }
}

impl ExecutionHistoryManager {
    /// A manager with a window of `window` detailed records, summarising `batch` at a time
    /// (both at least 1; the batch is at most the window).
    pub fn new(window: usize, batch: usize) -> Self {
        let window = window.max(1);
        Self {
            window,
            batch: batch.clamp(1, window),
            summary: None,
            summarised: 0,
            records: Vec::new(),
        }
    }

    /// Appends a record; when the window overflows, the oldest batch is summarised.
    pub fn push(&mut self, record: StepRecord) {
        self.records.push(record);
        if self.records.len() > self.window {
            let n = self.batch.min(self.records.len());
            let batch: Vec<StepRecord> = self.records.drain(..n).collect();
            let labelled: Vec<String> = batch
                .iter()
                .map(|r| format!("[step {} {}] {}", r.step, r.kind.as_str(), r.content))
                .collect();
            let digest = Digest::from_sources(labelled.iter().map(|text| Source {
                role: Role::Assistant,
                content: text,
                tool_calls: &[],
                tool_call_id: None,
                seq: None,
            }));
            match &mut self.summary {
                Some(s) => s.merge(digest),
                None => self.summary = Some(digest),
            }
            self.summarised += n;
        }
    }

    /// The detailed records still in the window.
    pub fn records(&self) -> &[StepRecord] {
        &self.records
    }

    /// How many records have been summarised so far.
    pub fn summarised(&self) -> usize {
        self.summarised
    }

    /// The history for a prompt: the summary of older steps, then the detailed records.
    pub fn history(&self) -> String {
        let mut out = String::new();
        if let Some(s) = &self.summary {
            out.push_str(&format!(
                "# Earlier steps ({} summarised)\n",
                self.summarised
            ));
            out.push_str(&s.render(Detail::Deep));
        }
        if !self.records.is_empty() {
            out.push_str("# Recent steps\n");
            for r in &self.records {
                out.push_str(&format!(
                    "[step {} {}] {}\n",
                    r.step,
                    r.kind.as_str(),
                    r.content
                ));
            }
        }
        out
    }
}

/// A tool call as a step record says it: the tool's name, then its arguments as `key: value`
/// with bare keys. The step summary extracts literals from the records, and quoted JSON keys
/// (`"todos"`, `"status"`) would fill it with names instead of what the step did. Arguments
/// that are not JSON are kept as they came.
pub fn describe_call(name: &str, arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) if map.is_empty() => name.to_owned(),
        Ok(value @ serde_json::Value::Object(_)) => {
            let mut out = format!("{name}(");
            describe_value(&value, &mut out, true);
            out.push(')');
            out
        }
        Ok(value) => {
            let mut out = format!("{name} ");
            describe_value(&value, &mut out, false);
            out
        }
        Err(_) => format!("{name} {arguments}"),
    }
}

fn describe_value(value: &serde_json::Value, out: &mut String, top: bool) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if !top {
                out.push('(');
            }
            for (i, (key, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push_str(": ");
                describe_value(v, out, false);
            }
            if !top {
                out.push(')');
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str("; ");
                }
                describe_value(v, out, false);
            }
            out.push(']');
        }
        // A string is a value the step used: quoted, so one with spaces stays one literal.
        Value::String(text) => out.push_str(&Value::String(text.clone()).to_string()),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_the_oldest_batch_when_full() {
        let mut h = ExecutionHistoryManager::default();
        for step in 1..=6u32 {
            h.push(StepRecord {
                step,
                kind: StepKind::Action,
                content: format!("Decision: read /data/file-{step}.csv for ACC-{step:05}."),
            });
        }
        assert_eq!(h.summarised(), 3);
        assert_eq!(h.records().len(), 3);
        assert_eq!(h.records()[0].step, 4);
        let text = h.history();
        let summary_at = text.find("# Earlier steps").unwrap();
        let recent_at = text.find("# Recent steps").unwrap();
        assert!(summary_at < recent_at);
        for step in 1..=6 {
            assert!(text.contains(&format!("/data/file-{step}.csv")), "{text}");
        }
        let json = serde_json::to_string(&h).unwrap();
        let back: ExecutionHistoryManager = serde_json::from_str(&json).unwrap();
        assert_eq!(back.history(), text);
    }

    #[test]
    fn the_step_summary_keeps_what_steps_did_not_the_keys_of_their_json() {
        let mut h = ExecutionHistoryManager::default();
        let titles: Vec<String> = (1..=9)
            .map(|q| format!("Reconcile the Q{q} ledger against bank statement BS-{q:04}"))
            .collect();
        for (step, title) in (1u32..).zip(&titles) {
            let todos = format!(
                r#"{{"todos":[{{"title":"{title}","status":"done","phase":"reconcile"}}]}}"#
            );
            let read = format!(r#"{{"path":"/data/ledger-q{step}.csv","limit":200}}"#);
            h.push(StepRecord {
                step,
                kind: StepKind::Action,
                content: format!(
                    "{}; {}",
                    describe_call("todo_update", &todos),
                    describe_call("read_file", &read)
                ),
            });
        }
        assert!(h.summarised() >= 6, "the oldest steps were summarised");
        let text = h.history();
        for key in [
            "\"todos\"",
            "\"title\"",
            "\"status\"",
            "\"path\"",
            "\"limit\"",
        ] {
            assert!(
                !text.contains(key),
                "a JSON key {key} in the step history:\n{text}"
            );
        }
        for (step, title) in (1..).zip(&titles) {
            assert!(text.contains(title.as_str()), "{title} lost:\n{text}");
            assert!(
                text.contains(&format!("/data/ledger-q{step}.csv")),
                "{text}"
            );
        }
        assert!(text.contains("status: \"done\""), "{text}");
        // Arguments that are not JSON, and calls without any, read as they came.
        assert_eq!(describe_call("shell", "ls -l"), "shell ls -l");
        assert_eq!(describe_call("list_todos", "{}"), "list_todos");
        assert_eq!(describe_call("echo", r#""hi""#), r#"echo "hi""#);
    }
}
