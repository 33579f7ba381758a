//! A deterministic generator of long, realistic agent conversations.

use decima_core::{NewMessage, Role, ToolCall};

/// What kind of fact was planted, so fidelity tests can weigh them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactKind {
    /// The user's goal, stated once at the start.
    Goal,
    /// A decision the assistant announced.
    Decision,
    /// An opaque id such as `prompt-uuid-123`.
    Id,
    /// A filesystem path.
    Path,
    /// A URL.
    Url,
    /// A constraint the user quoted and expects to be kept.
    Constraint,
    /// A pinned todo line (the message carrying it is pinned).
    PinnedTodo,
}

/// A literal planted in the conversation, with the 1-based position of the message carrying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlantedFact {
    /// What it is.
    pub kind: FactKind,
    /// The exact text that must survive.
    pub text: String,
    /// 1-based index of the message that carries it (equal to its seq when imported first).
    pub position: usize,
}

/// The generated messages and the facts planted in them.
#[derive(Debug, Clone)]
pub struct BuiltConversation {
    /// The messages, in order.
    pub messages: Vec<NewMessage>,
    /// Every planted fact.
    pub facts: Vec<PlantedFact>,
}

impl BuiltConversation {
    /// The conversation as OpenAI-style JSONL, the format `decima conversation import` reads.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for m in &self.messages {
            out.push_str(&decima_core::openai_jsonl::draft_to_line(m));
            out.push('\n');
        }
        out
    }
}

/// Builds a conversation of a given length from a seed. The same seed and settings always give the
/// same messages, so failures reproduce.
#[derive(Debug, Clone)]
pub struct ConversationBuilder {
    seed: u64,
    len: usize,
    content_chars: usize,
    pin_every: usize,
}

const TOOLS: [&str; 3] = ["shell", "read_file", "write_file"];
const ENGLISH: [&str; 6] = [
    "The revenue column has mixed currencies, so totals need a conversion step first.",
    "Rows with a null customer id are excluded from the join, which explains the gap.",
    "The March figures look seasonal; compare them with the same month last year.",
    "I will check the schema before running the aggregation again.",
    "The outliers come from a single batch that was imported twice.",
    "Grouping by region shows the drop is concentrated in two stores.",
];
const CHINESE: [&str; 6] = [
    "收入列包含多种货币，汇总之前需要先做换算。",
    "客户编号为空的行在连接时被排除，这解释了差异。",
    "三月份的数据呈现季节性，请与去年同期比较。",
    "我会先检查表结构，然后重新运行聚合。",
    "异常值来自一个被重复导入的批次。",
    "按地区分组后可以看出下降集中在两家门店。",
];

impl ConversationBuilder {
    /// A builder for `len` messages from `seed`.
    pub fn new(seed: u64, len: usize) -> Self {
        Self {
            seed,
            len,
            content_chars: 240,
            pin_every: 97,
        }
    }

    /// Roughly how long each prose message is, in characters.
    pub fn content_chars(mut self, chars: usize) -> Self {
        self.content_chars = chars.max(16);
        self
    }

    /// Pins one message in every `n` (0 disables pinning of ordinary messages).
    pub fn pin_every(mut self, n: usize) -> Self {
        self.pin_every = n;
        self
    }

    /// Generates the conversation.
    pub fn build(&self) -> BuiltConversation {
        let mut rng = fastrand::Rng::with_seed(self.seed);
        let mut messages = Vec::with_capacity(self.len);
        let mut facts = Vec::new();
        let mut call_counter = 0usize;

        let goal = format!(
            "Goal: reconcile the Q3 invoices of account ACC-{:05} against the ledger and explain every difference above 100 EUR.",
            rng.u32(0..100_000)
        );
        let preamble = [
            NewMessage::new(
                Role::System,
                "You are Decima's analyst agent. Use tools; never invent data.",
            ),
            NewMessage {
                pinned: true,
                ..NewMessage::new(Role::User, goal.clone())
            },
        ];
        for m in preamble.into_iter().take(self.len) {
            messages.push(m);
        }
        if messages.len() == 2 {
            facts.push(PlantedFact {
                kind: FactKind::Goal,
                text: goal,
                position: 2,
            });
        }

        while messages.len() < self.len {
            let position = messages.len() + 1;
            let slot = rng.usize(0..10);
            let remaining = self.len - messages.len();
            if slot < 4 && remaining >= 2 {
                call_counter += 1;
                let call_id = format!("call_{call_counter:06}");
                let tool = TOOLS[rng.usize(0..TOOLS.len())];
                let path = format!(
                    "/workspace/data/batch-{call_counter}/part-{}.csv",
                    rng.u32(0..1000)
                );
                facts.push(PlantedFact {
                    kind: FactKind::Path,
                    text: path.clone(),
                    position,
                });
                let arguments = match tool {
                    "shell" => serde_json::json!({ "cmd": format!("wc -l {path}") }),
                    "read_file" => serde_json::json!({ "path": path }),
                    _ => serde_json::json!({ "path": path, "content": "id,amount\n1,10\n" }),
                }
                .to_string();
                messages.push(NewMessage {
                    reasoning: Some(
                        self.prose(&mut rng, "I need to look at the data before concluding."),
                    ),
                    tool_calls: vec![ToolCall {
                        id: call_id.clone(),
                        name: tool.into(),
                        arguments,
                        signature: None,
                    }],
                    ..NewMessage::new(Role::Assistant, "")
                });
                let output = format!("exit_code=0\n{} {}\n", rng.u32(1..1_000_000), path);
                messages.push(NewMessage {
                    tool_call_id: Some(call_id),
                    ..NewMessage::new(Role::Tool, output)
                });
                continue;
            }
            let (role, content) = match slot {
                4 => {
                    let id = format!("prompt-uuid-{}", rng.u32(100..1_000_000));
                    facts.push(PlantedFact {
                        kind: FactKind::Id,
                        text: id.clone(),
                        position,
                    });
                    (
                        Role::User,
                        format!(
                            "Use the record {id} as the reference. {}",
                            self.prose(&mut rng, "")
                        ),
                    )
                }
                5 => {
                    let url = format!(
                        "https://ledger.example.com/api/v2/entries/{}",
                        rng.u32(1..10_000_000)
                    );
                    facts.push(PlantedFact {
                        kind: FactKind::Url,
                        text: url.clone(),
                        position,
                    });
                    (
                        Role::Assistant,
                        format!("The ledger entry is at {url}. {}", self.prose(&mut rng, "")),
                    )
                }
                6 => {
                    let decision = format!(
                        "Decision: treat batch {} as a duplicate and exclude it from totals.",
                        rng.u32(1..10_000)
                    );
                    facts.push(PlantedFact {
                        kind: FactKind::Decision,
                        text: decision.clone(),
                        position,
                    });
                    (
                        Role::Assistant,
                        format!("{decision} {}", self.prose(&mut rng, "")),
                    )
                }
                7 => {
                    let constraint = format!(
                        "\"Never modify files under /workspace/raw-{}\"",
                        rng.u32(1..1000)
                    );
                    facts.push(PlantedFact {
                        kind: FactKind::Constraint,
                        text: constraint.clone(),
                        position,
                    });
                    (
                        Role::User,
                        format!("Remember: {constraint}. {}", self.prose(&mut rng, "")),
                    )
                }
                _ => {
                    let role = if rng.bool() {
                        Role::User
                    } else {
                        Role::Assistant
                    };
                    (role, self.prose(&mut rng, ""))
                }
            };
            let pinned = self.pin_every > 0 && position % self.pin_every == 0;
            let content = if pinned {
                let todo = format!(
                    "TODO[pinned]: verify totals for region R-{}",
                    rng.u32(1..100)
                );
                facts.push(PlantedFact {
                    kind: FactKind::PinnedTodo,
                    text: todo.clone(),
                    position,
                });
                format!("{todo}. {content}")
            } else {
                content
            };
            messages.push(NewMessage {
                pinned,
                ..NewMessage::new(role, content)
            });
        }
        BuiltConversation { messages, facts }
    }

    /// English and Chinese sentences up to about `content_chars` characters.
    fn prose(&self, rng: &mut fastrand::Rng, lead: &str) -> String {
        let mut text = String::from(lead);
        while text.chars().count() < self.content_chars {
            if !text.is_empty() {
                text.push(' ');
            }
            if rng.u8(0..3) == 0 {
                text.push_str(CHINESE[rng.usize(0..CHINESE.len())]);
            } else {
                text.push_str(ENGLISH[rng.usize(0..ENGLISH.len())]);
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_deterministic_and_exact_length() {
        let a = ConversationBuilder::new(7, 500).build();
        let b = ConversationBuilder::new(7, 500).build();
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.messages.len(), 500);
        let c = ConversationBuilder::new(8, 500).build();
        assert_ne!(a.messages, c.messages);
    }

    #[test]
    fn every_message_is_valid_and_tool_calls_have_results() {
        let built = ConversationBuilder::new(1, 2_000).build();
        for (i, m) in built.messages.iter().enumerate() {
            m.validate().unwrap();
            for call in &m.tool_calls {
                let next = &built.messages[i + 1];
                assert_eq!(next.tool_call_id.as_deref(), Some(call.id.as_str()));
            }
        }
    }

    #[test]
    fn plants_every_kind_of_fact_where_it_says() {
        let built = ConversationBuilder::new(3, 1_000).build();
        for kind in [
            FactKind::Goal,
            FactKind::Decision,
            FactKind::Id,
            FactKind::Path,
            FactKind::Url,
            FactKind::Constraint,
            FactKind::PinnedTodo,
        ] {
            assert!(
                built.facts.iter().any(|f| f.kind == kind),
                "{kind:?} missing"
            );
        }
        for fact in &built.facts {
            let m = &built.messages[fact.position - 1];
            let haystack = format!("{} {:?}", m.content, m.tool_calls);
            assert!(haystack.contains(&fact.text), "{fact:?}");
        }
        let text = built
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<String>();
        assert!(
            text.contains("收入") || text.contains("客户"),
            "Chinese text expected"
        );
    }

    #[test]
    fn jsonl_has_one_line_per_message() {
        let built = ConversationBuilder::new(5, 50).build();
        let jsonl = built.to_jsonl();
        assert_eq!(jsonl.lines().count(), 50);
        for line in jsonl.lines() {
            decima_core::openai_jsonl::parse_line(line).unwrap();
        }
    }
}
