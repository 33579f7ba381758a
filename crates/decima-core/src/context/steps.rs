//! The execution step history (the ExecutionHistoryManager of the original design): step records
//! in a window, the oldest batch summarised with the extract strategy when the window is full.

use serde::{Deserialize, Serialize};

use crate::context::extract::{Detail, Digest, Source, Speaker};

/// What a step record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
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
        self.into()
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
    /// The step of the oldest summarised record: a request whose window still holds that
    /// step's messages verbatim needs no summary of it.
    #[serde(default)]
    summary_from: Option<u32>,
    /// The summary as [`Self::history_within`] last rendered it: (records summarised, budget,
    /// text). It changes only when a batch is summarised, and a step asks for it every time.
    #[serde(skip)]
    rendered: Option<(usize, u32, String)>,
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
            summary_from: None,
            rendered: None,
        }
    }

    /// Appends a record; when the window overflows, the oldest batch is summarised.
    pub fn push(&mut self, record: StepRecord) {
        self.records.push(record);
        if self.records.len() > self.window {
            let n = self.batch.min(self.records.len());
            let batch: Vec<StepRecord> = self.records.drain(..n).collect();
            if self.summary_from.is_none() {
                self.summary_from = batch.first().map(|r| r.step);
            }
            let labelled: Vec<String> = batch
                .iter()
                .map(|r| format!("[step {} {}] {}", r.step, r.kind.as_str(), r.content))
                .collect();
            let digest = Digest::from_sources(
                labelled
                    .iter()
                    .map(|text| Source::text(Speaker::Assistant, text)),
            );
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
        let summary = self.summary.as_ref().map(|s| s.render(Detail::Deep));
        self.history_with(summary.as_deref())
    }

    /// [`Self::history`] with the summary of older steps rendered within `max_tokens`: the
    /// most important items that fit, the rest folded into counts. It goes into every request
    /// of a run, and unbounded it grew with the run (1,400 tokens after 30 steps).
    pub fn history_within(&mut self, max_tokens: u32, counter: &dyn crate::TokenCounter) -> String {
        let key = (self.summarised, max_tokens);
        let stale = self
            .rendered
            .as_ref()
            .is_none_or(|(summarised, budget, _)| (*summarised, *budget) != key);
        if stale {
            let text = self.summary.as_ref().map_or_else(String::new, |s| {
                crate::context::fold::render_within(s, Detail::Deep, max_tokens, counter).0
            });
            self.rendered = Some((key.0, key.1, text));
        }
        let summary = self
            .rendered
            .as_ref()
            .map(|(_, _, text)| text.as_str())
            .filter(|_| self.summary.is_some());
        self.history_with(summary)
    }

    /// [`Self::history_within`] for a request that still holds some steps' messages verbatim:
    /// only the records of steps that have `left` the window (their messages compressed into
    /// a summary or folded away) are carried, and the summary only once its oldest step has
    /// left. The history sits in the request's volatile tail, which no prompt cache serves, so
    /// repeating what the request already shows would cost its whole length at every step.
    pub fn history_left(
        &mut self,
        max_tokens: u32,
        counter: &dyn crate::TokenCounter,
        left: impl Fn(u32) -> bool,
    ) -> String {
        let summary_left = self.summary_from.is_none_or(&left);
        if summary_left && self.records.iter().all(|r| left(r.step)) {
            return self.history_within(max_tokens, counter);
        }
        let summary = if summary_left && self.summary.is_some() {
            // Rendered (and cached) as the whole history renders it.
            self.history_within(max_tokens, counter);
            self.rendered.as_ref().map(|(_, _, text)| text.clone())
        } else {
            None
        };
        let kept: Vec<&StepRecord> = self.records.iter().filter(|r| left(r.step)).collect();
        render(self.summarised, summary.as_deref(), &kept)
    }

    fn history_with(&self, summary: Option<&str>) -> String {
        let records: Vec<&StepRecord> = self.records.iter().collect();
        render(self.summarised, summary, &records)
    }
}

/// The step history's text: the summary of `summarised` older records, then the records.
fn render(summarised: usize, summary: Option<&str>, records: &[&StepRecord]) -> String {
    let mut out = String::new();
    if let Some(s) = summary {
        out.push_str(&format!("# Earlier steps ({summarised} summarised)\n"));
        out.push_str(s);
        if !s.ends_with('\n') {
            out.push('\n');
        }
    }
    if !records.is_empty() {
        out.push_str("# Recent steps\n");
        for r in records {
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
    fn only_the_steps_that_left_the_window_are_carried() {
        let counter = crate::EstimateCounter;
        let mut h = ExecutionHistoryManager::default();
        for step in 1..=8u32 {
            h.push(StepRecord {
                step,
                kind: StepKind::Action,
                content: format!("shell(command: wc -l /data/file-{step}.csv)"),
            });
        }
        // Steps 1-3 were summarised; 4-8 are detailed.
        assert_eq!(h.summary_from, Some(1));
        // Every step's messages are still in the request: nothing to carry.
        assert_eq!(h.history_left(600, &counter, |_| false), "");
        // Steps up to 5 were compressed: the summary and steps 4 and 5, not 6 to 8.
        let text = h.history_left(600, &counter, |step| step <= 5);
        assert!(text.contains("# Earlier steps"), "{text}");
        assert!(
            text.contains("file-5.csv") && text.contains("[step 4 "),
            "{text}"
        );
        assert!(
            !text.contains("[step 6 ") && !text.contains("file-8.csv"),
            "{text}"
        );
        // All of them left: the whole history, as before.
        assert_eq!(
            h.history_left(600, &counter, |_| true),
            h.history_within(600, &counter)
        );
        // A history written before the field existed reads with no summary step, and carries
        // its summary (nothing says the steps are still in the window).
        let mut json = serde_json::to_value(&h).unwrap();
        json.as_object_mut().unwrap().remove("summary_from");
        let mut old: ExecutionHistoryManager = serde_json::from_value(json).unwrap();
        assert!(
            old.history_left(600, &counter, |step| step <= 3)
                .contains("# Earlier steps")
        );
    }

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
    fn the_summary_of_earlier_steps_stays_within_its_budget_however_long_the_run() {
        use crate::TokenCounter;
        let counter = crate::EstimateCounter;
        let mut h = ExecutionHistoryManager::default();
        let mut sizes = Vec::new();
        for step in 1..=300u32 {
            h.push(StepRecord {
                step,
                kind: StepKind::Action,
                content: format!(
                    "read_file(path: \"/data/ledger-{step}.csv\") found ACC-{:05} at {step}.{:02} EUR",
                    step * 7,
                    step % 100
                ),
            });
            if step % 50 == 0 {
                let text = h.history_within(400, &counter);
                let summary = text.split("# Recent steps").next().unwrap();
                sizes.push(counter.count_text(summary));
                assert!(text.contains("# Earlier steps"), "{text}");
                assert!(
                    text.contains(&format!("/data/ledger-{step}.csv")),
                    "the newest stay whole"
                );
            }
        }
        // The header and the budgeted summary: bounded, not growing with the run.
        assert!(sizes.iter().all(|&s| s <= 420), "{sizes:?}");
        assert!(h.history().len() > h.history_within(400, &counter).len() * 2);
        // The same state gives the same text, which the cache keeps.
        assert_eq!(
            h.history_within(400, &counter),
            h.history_within(400, &counter)
        );
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
