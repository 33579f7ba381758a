//! A second, independent generator of long analyst sessions, written without looking at how
//! Decima extracts facts. It is meant to catch a summariser that only keeps what the first
//! generator ([`crate::ConversationBuilder`]) happens to plant.
//!
//! An analyst investigates subscription churn with an agent, in English or in Chinese. The agent
//! runs `shell` and `read_file` tools, polls the same log again and again, counts lines in
//! thousands of near-identical export parts, and tails logs full of timestamps. Spread evenly
//! through the session are the facts a summary must keep: the literals people paste (thresholds,
//! hosts and ports, IPv4 and IPv6 addresses, URLs of several schemes, e-mail addresses, commit
//! hashes, versions, dates with times and zones, ticket ids, quoted and backticked names, unix,
//! home and Windows paths, percentages, sizes, money), stated by the user, by the agent or
//! printed by a tool; and decisions and constraints, phrased the way people talk.

use decima_core::{NewMessage, Role, ToolCall};

mod facts;

/// The language of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// English prose.
    English,
    /// Chinese prose (literals stay as they are).
    Chinese,
}

/// What a recorded fact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnalystFactKind {
    /// An exact value that must survive verbatim.
    Literal,
    /// A decision; its key phrase must survive.
    Decision,
    /// A constraint the user set; its key phrase must survive.
    Constraint,
}

/// A fact planted in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalystFact {
    /// Literal, decision or constraint.
    pub kind: AnalystFactKind,
    /// A finer label for reports, e.g. `host:port` or `commit`.
    pub label: &'static str,
    /// The exact text (a literal) or key phrase (a decision or constraint) that must survive.
    pub text: String,
    /// Whether the user stated it (rather than the agent or a tool).
    pub by_user: bool,
    /// 1-based index of the message that carries it.
    pub position: usize,
}

/// A generated session and its facts.
#[derive(Debug, Clone)]
pub struct AnalystConversation {
    /// The messages, in order.
    pub messages: Vec<NewMessage>,
    /// Every planted fact.
    pub facts: Vec<AnalystFact>,
}

/// Builds an analyst session of an exact length from a seed; the same inputs always give the
/// same session.
#[derive(Debug, Clone)]
pub struct AnalystConversationBuilder {
    seed: u64,
    len: usize,
    language: Language,
    fact_beats: Option<usize>,
}

impl AnalystConversationBuilder {
    /// A session of `len` messages (at least 2) in `language`.
    pub fn new(seed: u64, len: usize, language: Language) -> Self {
        Self {
            seed,
            len: len.max(2),
            language,
            fact_beats: None,
        }
    }

    /// How many fact-carrying exchanges to spread through the session (default: one per 40
    /// messages, between 30 and 120).
    pub fn fact_beats(mut self, n: usize) -> Self {
        self.fact_beats = Some(n);
        self
    }

    /// Generates the session.
    pub fn build(&self) -> AnalystConversation {
        let mut g = Gen {
            rng: fastrand::Rng::with_seed(self.seed),
            zh: self.language == Language::Chinese,
            messages: Vec::with_capacity(self.len),
            facts: Vec::new(),
            calls: 0,
            part: 0,
            grep_count: 400,
            beats: [0; 5],
        };
        g.opening();
        let beats = self
            .fact_beats
            .unwrap_or_else(|| (self.len / 40).clamp(30, 120));
        let body = self.len.saturating_sub(g.messages.len());
        let mut next_beat = 0usize;
        while g.messages.len() < self.len {
            let remaining = self.len - g.messages.len();
            let due = next_beat < beats && {
                let target = 2 + (next_beat + 1) * body / (beats + 1);
                g.messages.len() + 1 >= target
            };
            if due && remaining >= 2 {
                g.fact_beat(next_beat);
                next_beat += 1;
            } else if remaining >= 2 {
                g.filler();
            } else {
                g.chat();
            }
        }
        g.messages.truncate(self.len);
        g.facts.retain(|f| f.position <= self.len);
        AnalystConversation {
            messages: g.messages,
            facts: g.facts,
        }
    }
}

struct Gen {
    rng: fastrand::Rng,
    zh: bool,
    messages: Vec<NewMessage>,
    facts: Vec<AnalystFact>,
    calls: usize,
    part: usize,
    grep_count: u32,
    beats: [usize; 5],
}

const FIRST: [&str; 6] = ["maria", "j", "wei", "tom", "aisha", "li"];
const LAST: [&str; 6] = ["lopez", "okafor", "zhang", "berg", "khan", "na"];
const HEX: &[u8; 16] = b"0123456789abcdef";

impl Gen {
    fn pos(&self) -> usize {
        self.messages.len() + 1
    }

    fn fact(&mut self, kind: AnalystFactKind, label: &'static str, text: &str, by_user: bool) {
        self.facts.push(AnalystFact {
            kind,
            label,
            text: text.to_string(),
            by_user,
            position: self.pos(),
        });
    }

    fn say(&mut self, role: Role, content: String) {
        self.messages.push(NewMessage::new(role, content));
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.usize(0..items.len())]
    }

    fn hex(&mut self, n: usize) -> String {
        // Starts with a digit and a letter, so it is unmistakably a hash.
        let mut s = String::with_capacity(n);
        s.push(char::from(b'1' + self.rng.u8(0..9)));
        s.push(char::from(b'a' + self.rng.u8(0..6)));
        for _ in 2..n {
            s.push(char::from(HEX[self.rng.usize(0..16)]));
        }
        s
    }

    /// Runs a tool: an assistant turn with the call, then the result.
    fn tool(&mut self, name: &str, args: serde_json::Value, output: String, lead: String) {
        self.calls += 1;
        let id = format!("toolu_{:07}", self.calls);
        self.messages.push(NewMessage {
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: name.into(),
                arguments: args.to_string(),
                signature: None,
            }],
            ..NewMessage::new(Role::Assistant, lead)
        });
        self.messages.push(NewMessage {
            tool_call_id: Some(id),
            ..NewMessage::new(Role::Tool, output)
        });
    }

    fn opening(&mut self) {
        let sys = if self.zh {
            "你是一名数据分析助手，可以使用 shell 和 read_file 工具。"
        } else {
            "You are a data analysis assistant with shell and read_file tools."
        };
        self.say(Role::System, sys.into());
        let bucket = format!(
            "s3://{}-analytics-raw/subs/2026-q3/",
            self.pick(&["northwind", "acme", "huaxin"])
        );
        let cutoff = format!("0.{}", self.rng.u32(7001..9999));
        let (text, no_write, no_pii) = if self.zh {
            (
                format!(
                    "帮我把第三季度订阅导出数据做一次流失分析，按套餐档位和地区拆分，最后写一份给财务评审用的简短备忘录。原始数据在 {bucket}，风险分数阈值定为 {cutoff}。约束：在我看过结果之前，不要往数仓里回写任何数据。报告里不要出现客户姓名和手机号。"
                ),
                "不要往数仓里回写任何数据",
                "报告里不要出现客户姓名和手机号",
            )
        } else {
            (
                format!(
                    "I need a churn breakdown for the Q3 subscription export, split by plan tier and region, plus a short memo for the finance review.\nThe raw dump is at {bucket} and anything scoring above {cutoff} counts as at risk.\nDon't write anything back to the warehouse until I've seen the numbers. Personal data (names, phone numbers) stays out of the memo."
                ),
                "Don't write anything back to the warehouse until I've seen the numbers",
                "Personal data (names, phone numbers) stays out of the memo",
            )
        };
        self.fact(AnalystFactKind::Literal, "s3 url", &bucket, true);
        self.fact(AnalystFactKind::Literal, "decimal", &cutoff, true);
        self.fact(
            AnalystFactKind::Constraint,
            "goal constraint",
            no_write,
            true,
        );
        self.fact(AnalystFactKind::Constraint, "goal constraint", no_pii, true);
        self.say(Role::User, text);
    }

    fn fact_beat(&mut self, n: usize) {
        // A cycle of 12 beats: 5 user literals, 2 decisions, 2 agent literals, 2 constraints
        // and one tool literal; each kind walks through its own variants.
        const CYCLE: [u8; 12] = [0, 1, 2, 3, 0, 4, 0, 3, 1, 0, 2, 0];
        let kind = CYCLE[n % CYCLE.len()];
        let i = self.beats[usize::from(kind)];
        self.beats[usize::from(kind)] += 1;
        match kind {
            0 => self.user_literal(i),
            1 => self.decision(i),
            2 => self.assistant_literal(i),
            3 => self.constraint(i),
            _ => self.tool_literal(i),
        }
    }

    /// Surrounds a user's sentence with chatter, sometimes on other lines.
    fn wrap_user(&mut self, text: String) -> String {
        let before = self.rng.u8(0..3);
        let after = self.rng.u8(0..3);
        let mut out = String::new();
        let sep = if self.zh {
            ""
        } else if self.rng.bool() {
            " "
        } else {
            "\n"
        };
        if before == 0 {
            out.push_str(&self.chat_line());
            out.push_str(sep);
        }
        out.push_str(&text);
        if after == 0 {
            out.push_str(sep);
            out.push_str(&self.chat_line());
        }
        out
    }

    fn ack(&mut self) -> String {
        if self.zh {
            self.pick(&[
                "收到。",
                "好的，我记下了。",
                "明白，继续。",
                "了解，我按这个来。",
            ])
            .into()
        } else {
            self.pick(&[
                "Got it.",
                "Noted, thanks.",
                "Understood, carrying on.",
                "Makes sense, will do.",
            ])
            .into()
        }
    }

    fn chat_line(&mut self) -> String {
        if self.zh {
            self.pick(&[
                "有进展吗？",
                "这个比我预想的低。",
                "欧盟的数字能再核对一下吗？",
                "看起来还算合理。",
                "第三个月之后的留存曲线是什么样的？",
                "我中午前都在开会，你先继续。",
                "嗯，有意思。",
            ])
            .into()
        } else {
            self.pick(&[
                "Any progress?",
                "Hmm, that's lower than I expected.",
                "Can you double-check the EU numbers?",
                "Looks plausible to me.",
                "What does retention look like after month three?",
                "I'm in meetings until noon, carry on.",
                "Interesting.",
            ])
            .into()
        }
    }

    fn commentary(&mut self) -> String {
        if self.zh {
            self.pick(&[
                "分布看起来是双峰的，我看看第二个峰是不是某一批用户。",
                "大部分下降集中在自助购买的档位。",
                "我用修正后的映射重新跑一遍聚合。",
                "最后一批数据没有异常。",
                "总数和财务的提取在舍入误差内一致。",
                "年付用户续费造成了第二个峰。",
            ])
            .into()
        } else {
            self.pick(&[
                "The distribution looks bimodal; checking whether the second peak is one cohort.",
                "Most of the drop sits in the self-serve tier.",
                "Re-running the aggregation with the corrected mapping.",
                "Nothing unusual in the last batch.",
                "Totals reconcile with the finance extract within rounding.",
                "Annual plans renewing explain the second peak.",
            ])
            .into()
        }
    }

    fn chat(&mut self) {
        if self.rng.bool() {
            let t = self.chat_line();
            self.say(Role::User, t);
        } else {
            let t = self.commentary();
            self.say(Role::Assistant, t);
        }
    }

    /// Background work: repeated polling, near-identical commands, noisy logs, chatter.
    fn filler(&mut self) {
        let lead = if self.zh { "继续检查。" } else { "" };
        match self.rng.u8(0..20) {
            0..=5 => {
                self.grep_count += self.rng.u32(0..3);
                let out = format!("{}\n", self.grep_count);
                self.tool(
                    "shell",
                    serde_json::json!({ "command": "grep -c ERROR /var/log/ingest/worker.log" }),
                    out,
                    lead.into(),
                );
            }
            6..=10 => {
                self.part += 1;
                let path = format!("/data/exports/q3/part-{:05}.csv", self.part);
                let out = format!("{} {path}\n", self.rng.u32(10_000..90_000));
                self.tool(
                    "shell",
                    serde_json::json!({ "command": format!("wc -l {path}") }),
                    out,
                    lead.into(),
                );
            }
            11..=13 => {
                let mut out = String::new();
                for _ in 0..3 {
                    out.push_str(&format!(
                        "2026-10-{:02}T{:02}:{:02}:{:02}Z INFO batch {} committed in {}ms\n",
                        self.rng.u8(1..29),
                        self.rng.u8(0..24),
                        self.rng.u8(0..60),
                        self.rng.u8(0..60),
                        self.rng.u32(1000..99999),
                        self.rng.u16(20..900)
                    ));
                }
                self.tool(
                    "shell",
                    serde_json::json!({ "command": "tail -n 3 /var/log/ingest/worker.log" }),
                    out,
                    lead.into(),
                );
            }
            14 => {
                let out = if self.zh {
                    "# 备注\n- 按档位拆分\n- 先不看 2023 年以前的数据\n".to_string()
                } else {
                    "# notes\n- split by tier\n- ignore pre-2023 for the first pass\n".to_string()
                };
                self.tool(
                    "read_file",
                    serde_json::json!({ "path": "/srv/etl/notes/churn.md" }),
                    out,
                    String::new(),
                );
            }
            15..=17 => {
                let t = self.commentary();
                self.say(Role::Assistant, t);
                let q = self.chat_line();
                self.say(Role::User, q);
            }
            _ => self.chat(),
        }
    }
}

#[cfg(test)]
mod tests;
