//! A conversation as a Jupyter notebook that runs again: each `python` call a code cell, each
//! `shell` call a `%%bash` cell, each `write_file` a `%%writefile` cell, in the order they ran;
//! the analyst's messages and the agent's words as Markdown cells, an answer's figures with
//! footnotes naming their sources. Paths into the workspace are made relative, so the notebook
//! runs from the workspace's folder (in the analyst's image: `jupyter nbconvert --to notebook
//! --execute`). Cells whose call raised or failed when it ran are tagged `raises-exception`, so
//! running the notebook goes past them as the agent did.

use std::collections::HashMap;

use decima_core::{Message, Role};
use decima_sandbox::host::tools::{PYTHON, READ_FILE, SHELL, WRITE_FILE};
use decima_store::Conversation;
use serde_json::{Value, json};

use crate::figures::{ConversationLedger, footnoted};

/// The workspace as the container's tools see it; the host's folder is passed in.
const CONTAINER_WORKSPACE: &str = "/workspace";

/// The notebook of `messages`, as nbformat 4.5 JSON text. `host_workspaces` are the host
/// folders the runs worked in (their absolute paths in code are made relative too).
#[must_use]
pub fn render(
    conversation: &Conversation,
    messages: &[Message],
    ledger: Option<&ConversationLedger<'_>>,
    host_workspaces: &[String],
) -> String {
    let results: HashMap<&str, &str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| Some((m.tool_call_id.as_deref()?, m.content.as_str())))
        .collect();
    let relative = Relative::new(host_workspaces);
    let mut cells = Cells::default();
    cells.markdown(&format!(
        "# {}\n\nExported by Decima from conversation `{}`. Run it from the workspace's folder: \
         the paths in its cells are relative to it.",
        conversation.title, conversation.id
    ));
    for m in messages {
        match m.role {
            Role::User => cells.markdown(&format!("**Analyst:** {}", m.content)),
            Role::Assistant => {
                if let Some(reasoning) = m.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                    cells.markdown(&format!("*Reasoning:* {reasoning}"));
                }
                if !m.content.trim().is_empty() {
                    cells.markdown(&answer_text(m, ledger));
                }
                for call in &m.tool_calls {
                    let result = results.get(call.id.as_str()).copied().unwrap_or("");
                    cells.call(
                        &call.id,
                        &call.name,
                        &call.arguments,
                        result,
                        m.seq,
                        &relative,
                    );
                }
            }
            Role::Tool | Role::System => {}
        }
    }
    let notebook = json!({
        "cells": cells.0,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "decima": {"conversation": conversation.id.to_string(), "title": conversation.title},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    });
    let mut text = serde_json::to_string_pretty(&notebook).unwrap_or_default();
    text.push('\n');
    text
}

/// An answer's text, each figure marked with a footnote of its source when a ledger is given.
fn answer_text(m: &Message, ledger: Option<&ConversationLedger<'_>>) -> String {
    let Some(ledger) = ledger else {
        return m.content.clone();
    };
    let checked = ledger.check(m);
    if checked.is_empty() {
        return m.content.clone();
    }
    let (content, notes) = footnoted(m, &checked);
    format!("{content}\n\n{notes}")
}

/// Makes absolute workspace paths in code relative to the notebook's folder.
struct Relative {
    prefixes: Vec<String>,
}

impl Relative {
    fn new(host_workspaces: &[String]) -> Self {
        let mut prefixes: Vec<String> = host_workspaces
            .iter()
            .map(|w| w.trim_end_matches(['/', '\\']).to_owned())
            .filter(|w| w.len() > 1)
            .collect();
        prefixes.push(CONTAINER_WORKSPACE.to_owned());
        // The longest first, so that a folder inside another is taken whole.
        prefixes.sort_by_key(|p| std::cmp::Reverse(p.len()));
        Self { prefixes }
    }

    /// `code` with `<workspace>/x` written `./x`, and the workspace itself `.`, where the path
    /// stands alone: not inside another path (`/data/workspace/x` is left as it is), and
    /// followed by a separator, a quote, a space, a bracket or the end.
    fn apply(&self, code: &str) -> String {
        let mut out = code.to_owned();
        for p in &self.prefixes {
            out = replace_standalone(&out, p);
        }
        out
    }
}

/// `text` with each standalone occurrence of the folder `prefix` made relative.
fn replace_standalone(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = if at == 0 {
            out.chars().last()
        } else {
            rest[..at].chars().last()
        };
        let after = rest[at + prefix.len()..].chars().next();
        let starts = before
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '/' | '\\' | '.' | '_' | '-')));
        out.push_str(&rest[..at]);
        rest = &rest[at + prefix.len()..];
        match after {
            Some('/' | '\\') if starts => {
                out.push_str("./");
                rest = &rest[1..];
            }
            None | Some('\'' | '"' | ' ' | '\n' | ')' | ';') if starts => out.push('.'),
            _ => out.push_str(prefix),
        }
    }
    out.push_str(rest);
    out
}

#[derive(Default)]
struct Cells(Vec<Value>);

impl Cells {
    fn id(&self) -> String {
        format!("cell-{}", self.0.len() + 1)
    }

    fn markdown(&mut self, text: &str) {
        let id = self.id();
        self.0.push(json!({
            "cell_type": "markdown",
            "id": id,
            "metadata": {},
            "source": lines(text),
        }));
    }

    fn code(&mut self, source: &str, call_id: &str, seq: i64, raises: bool) {
        let id = self.id();
        let mut metadata = json!({"decima": {"call_id": call_id, "seq": seq}});
        if raises {
            metadata["tags"] = json!(["raises-exception"]);
        }
        self.0.push(json!({
            "cell_type": "code",
            "id": id,
            "metadata": metadata,
            "execution_count": null,
            "outputs": [],
            "source": lines(source),
        }));
    }

    /// One tool call: a cell that does what it did, or a note of what it was.
    fn call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        result: &str,
        seq: i64,
        relative: &Relative,
    ) {
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let text = |key: &str| args.get(key).and_then(Value::as_str);
        match name {
            PYTHON => {
                if let Some(code) = text("code") {
                    let raises = crate::python_tool::recorded_failure(result);
                    self.code(&relative.apply(code), call_id, seq, raises);
                }
            }
            SHELL => {
                if let Some(command) = text("command") {
                    let failed = !shell_succeeded(result);
                    let source = format!("%%bash\n{}", relative.apply(command));
                    self.code(&source, call_id, seq, failed);
                }
            }
            WRITE_FILE => {
                if let (Some(path), Some(content)) = (text("path"), text("content")) {
                    let path = relative.apply(path);
                    let path = path.strip_prefix("./").unwrap_or(&path);
                    let source = format!("%%writefile {}\n{content}", quoted(path));
                    self.code(&source, call_id, seq, false);
                }
            }
            READ_FILE | crate::plan::TODO_WRITE => {}
            other => self.markdown(&format!(
                "*The agent called `{other}` here (not run again by this notebook):*\n\n```json\n{}\n```",
                serde_json::to_string_pretty(&args).unwrap_or_else(|_| arguments.to_owned())
            )),
        }
    }
}

/// A shell result that ended with `[exit code 0]` (one that timed out or was killed did not).
fn shell_succeeded(result: &str) -> bool {
    result.trim_end().ends_with("[exit code 0]")
}

/// A path as `%%writefile` takes it: quoted when it holds a space.
fn quoted(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("\"{path}\"")
    } else {
        path.to_owned()
    }
}

/// A cell's source as nbformat keeps it: its lines, each but the last with its newline.
fn lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_into_the_workspace_become_relative() {
        let r = Relative::new(&["/home/ana/work".to_owned()]);
        assert_eq!(
            r.apply("pd.read_csv('/workspace/sales.csv')\nos.chdir('/workspace')"),
            "pd.read_csv('./sales.csv')\nos.chdir('.')"
        );
        assert_eq!(
            r.apply("cat /home/ana/work/a.csv > /home/ana/work/b.csv; cd /home/ana/work"),
            "cat ./a.csv > ./b.csv; cd ."
        );
        assert_eq!(r.apply("/workspaces/other"), "/workspaces/other");
        assert_eq!(r.apply("cp /data/workspace/x ."), "cp /data/workspace/x .");
        assert_eq!(r.apply("\"/workspace\""), "\".\"");
    }

    #[test]
    fn a_shell_call_succeeded_when_it_exited_zero() {
        assert!(shell_succeeded("ok\n[exit code 0]"));
        assert!(!shell_succeeded("no\n[exit code 2]"));
        assert!(!shell_succeeded(
            "[timed out after 1 s; the command and its children were killed]"
        ));
    }

    #[test]
    fn a_cell_keeps_its_lines() {
        assert_eq!(lines("a\nb\n"), ["a\n", "b\n"]);
        assert_eq!(lines("a\nb"), ["a\n", "b"]);
    }
}
