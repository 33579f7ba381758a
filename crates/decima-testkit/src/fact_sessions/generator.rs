//! The session loop: an opening, then noise, with fact-carrying exchanges ("beats") spread
//! evenly from start to end; and the voices of the three analysts and their agent.

use std::collections::VecDeque;

use decima_core::{NewMessage, Role, ToolCall};

use super::noise::NoiseState;
use super::{Fact, FactKind, FactSession, artifacts, pools};

/// The most messages one beat writes, so a beat never runs past the requested length.
const MAX_BEAT: usize = 8;
/// At most this many beats per session: the vocabulary holds about this many distinct subjects.
const MAX_BEATS: usize = 90;

/// What a beat plants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Beat {
    Clause,
    Correction,
    /// States a value that a later correction replaces.
    Setup,
    Label,
    Table,
    Code,
    Restate,
    Spaced,
    Decision,
    Constraint,
}

/// One cycle of beats; each cycle is shuffled, so kinds interleave differently every time.
const CYCLE: [Beat; 16] = [
    Beat::Clause,
    Beat::Clause,
    Beat::Correction,
    Beat::Correction,
    Beat::Setup,
    Beat::Label,
    Beat::Label,
    Beat::Table,
    Beat::Table,
    Beat::Code,
    Beat::Restate,
    Beat::Spaced,
    Beat::Spaced,
    Beat::Decision,
    Beat::Decision,
    Beat::Constraint,
];

/// Tried in this order when a beat's vocabulary is used up.
const FALLBACK: [Beat; 9] = [
    Beat::Label,
    Beat::Code,
    Beat::Spaced,
    Beat::Table,
    Beat::Restate,
    Beat::Constraint,
    Beat::Clause,
    Beat::Decision,
    Beat::Correction,
];

/// A value stated earlier that a later correction will replace.
pub(super) struct Pending {
    pub subject: Vec<String>,
    pub old: String,
    pub new: String,
    pub stated_at: usize,
    /// A choice between options rather than a parameter: corrected in other words, and a
    /// decision (not a user clause) if the session ends before it is corrected.
    pub choice: bool,
}

pub(super) struct Gen {
    pub rng: fastrand::Rng,
    pub zh: bool,
    /// 0: terse chat, 1: formal notes, 2: rambling asides.
    pub persona: usize,
    len: usize,
    pub messages: Vec<NewMessage>,
    pub facts: Vec<Fact>,
    calls: usize,
    call_prefix: &'static str,
    pub params: Vec<usize>,
    pub choices: Vec<usize>,
    pub limits: Vec<usize>,
    pub requirements: Vec<usize>,
    pub labels: Vec<usize>,
    pub tables: Vec<usize>,
    pub codes: Vec<usize>,
    pub spaced: Vec<usize>,
    pub pending: VecDeque<Pending>,
    pub noise: NoiseState,
}

/// The indices `0..n` in a random order: the order a session uses a vocabulary in.
fn shuffled(rng: &mut fastrand::Rng, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut v);
    v
}

impl Gen {
    pub fn new(seed: u64, len: usize, zh: bool) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let params = shuffled(&mut rng, pools::PARAMS.len());
        let choices = shuffled(&mut rng, pools::CHOICES.len());
        let limits = shuffled(&mut rng, pools::LIMITS.len());
        let requirements = shuffled(&mut rng, pools::REQUIREMENTS.len());
        let labels = shuffled(&mut rng, artifacts::LABEL_COUNT);
        let tables = shuffled(&mut rng, artifacts::TABLE_COUNT);
        let codes = shuffled(&mut rng, artifacts::CODE_COUNT);
        let spaced = shuffled(&mut rng, artifacts::SPACED_COUNT);
        let persona = rng.usize(0..3);
        let call_prefix = ["call_", "toolu_", "fc_"][rng.usize(0..3)];
        let noise = NoiseState::new(&mut rng);
        Self {
            rng,
            zh,
            persona,
            len,
            messages: Vec::with_capacity(len),
            facts: Vec::new(),
            calls: 0,
            call_prefix,
            params,
            choices,
            limits,
            requirements,
            labels,
            tables,
            codes,
            spaced,
            pending: VecDeque::new(),
            noise,
        }
    }

    pub fn run(mut self) -> FactSession {
        self.opening();
        let beats = if self.len < 40 {
            0
        } else {
            (self.len / 30).min(MAX_BEATS)
        };
        let mut plan = Vec::with_capacity(beats + CYCLE.len());
        while plan.len() < beats {
            let mut cycle = CYCLE;
            self.rng.shuffle(&mut cycle);
            plan.extend_from_slice(&cycle);
        }
        plan.truncate(beats);
        let start = self.messages.len() + 1;
        let body = self.len.saturating_sub(start + MAX_BEAT);
        let targets: Vec<usize> = (0..beats)
            .map(|k| {
                let slot = body / beats.max(1);
                let jitter = self.rng.usize(0..=slot / 2);
                start + k * body / beats.max(1) + slot / 4 + jitter
            })
            .collect();
        let mut next = 0;
        while self.messages.len() < self.len {
            let remaining = self.len - self.messages.len();
            if next < beats && self.pos() >= targets[next] && remaining >= MAX_BEAT {
                let planted = self.beat(plan[next]) || FALLBACK.iter().any(|&b| self.beat(b));
                if !planted {
                    self.noise(remaining);
                }
                next += 1;
            } else {
                self.noise(remaining);
            }
        }
        // Statements still waiting for their correction stand as they were said.
        while let Some(p) = self.pending.pop_front() {
            self.facts.push(Fact {
                id: String::new(),
                kind: if p.choice {
                    FactKind::Decision
                } else {
                    FactKind::UserClause
                },
                subject: p.subject,
                row: None,
                value: p.old,
                replaced: None,
                by: Role::User,
                position: p.stated_at,
                stated_at: None,
            });
        }
        self.facts.sort_by_key(|f| f.position);
        for (i, f) in self.facts.iter_mut().enumerate() {
            f.id = format!("f{:03}-{}", i + 1, f.kind.name().replace(' ', "-"));
        }
        FactSession {
            messages: self.messages,
            facts: self.facts,
        }
    }

    /// Plants one beat; `false` when its vocabulary is used up.
    fn beat(&mut self, beat: Beat) -> bool {
        match beat {
            Beat::Clause => self.user_clause(),
            Beat::Correction => self.correction(),
            Beat::Setup => self.setup(),
            Beat::Label => self.tool_label(),
            Beat::Table => self.table(),
            Beat::Code => self.code_value(),
            Beat::Restate => self.restatement(),
            Beat::Spaced => self.spaced_literal(),
            Beat::Decision => self.decision(),
            Beat::Constraint => self.constraint(),
        }
    }

    fn opening(&mut self) {
        if self.len == 0 {
            return;
        }
        let sys = if self.zh {
            "你是一名数据分析助手。可以使用 shell、read_file、write_file、run_sql 和 python 工具；不要编造数据，结论要有依据。"
        } else {
            "You are an analytics assistant. You can use the shell, read_file, write_file, run_sql and python tools. Never invent data; show your evidence."
        };
        self.say(Role::System, sys.to_string());
        if self.len == 1 {
            return;
        }
        let goal = match (self.zh, self.persona) {
            (false, 0) => {
                "hey — need a churn breakdown for the Q3 subscription export, by plan tier and region, plus a short memo for the finance review. raw dump is in the usual bucket. go"
            }
            (false, 1) => {
                "Good morning. I would like a churn analysis of the Q3 subscription export, broken down by plan tier and region, followed by a short memo for the finance review. The raw export is in the usual bucket. Please do not write anything back to the warehouse until I have seen the numbers."
            }
            (false, _) => {
                "ok so, the thing for this week: churn for Q3, split by tier and region (and maybe by acquisition channel if it's cheap?), and then a memo finance can read in five minutes. the export is where it always is. I'll be in and out of meetings, so just keep going and I'll drop stuff in as I remember it"
            }
            (true, 0) => {
                "帮我做下 Q3 订阅导出的流失分析，按套餐档位和地区拆，最后写个给财务评审的简短备忘录。原始数据在老地方。"
            }
            (true, 1) => {
                "你好。请对第三季度订阅导出数据做一次流失分析，按套餐档位和地区拆分，并为财务评审撰写一份简短备忘录。原始导出在常用的存储桶中。在我确认结果之前，请勿向数仓回写任何数据。"
            }
            (true, _) => {
                "ok 这周的活：Q3 的 churn，按 tier 和地区拆（有空的话再按获客渠道？），然后写个财务五分钟能看完的 memo。数据还在老地方。我今天会议很多，你先干着，我想起什么再补充"
            }
        };
        self.say(Role::User, goal.to_string());
    }

    /// The 1-based position the next message will have.
    pub fn pos(&self) -> usize {
        self.messages.len() + 1
    }

    pub fn say(&mut self, role: Role, content: String) {
        self.messages.push(NewMessage::new(role, content));
    }

    /// Runs a tool: an assistant message with the call, then its result. Returns the result's
    /// position.
    pub fn tool(
        &mut self,
        name: &str,
        args: serde_json::Value,
        output: String,
        lead: String,
    ) -> usize {
        self.calls += 1;
        let id = format!("{}{:06}", self.call_prefix, self.calls);
        self.messages.push(NewMessage {
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: name.to_string(),
                arguments: args.to_string(),
                signature: None,
            }],
            ..NewMessage::new(Role::Assistant, lead)
        });
        self.messages.push(NewMessage {
            tool_call_id: Some(id),
            ..NewMessage::new(Role::Tool, output)
        });
        self.pos() - 1
    }

    /// Records a fact carried by the message at `position`.
    pub fn fact(
        &mut self,
        kind: FactKind,
        subject: &[&str],
        value: &str,
        by: Role,
        position: usize,
    ) {
        self.fact_in_row(kind, subject, None, value, by, position);
    }

    /// Records a table cell: `subject` names the column, `row` the row.
    pub fn fact_in_row(
        &mut self,
        kind: FactKind,
        subject: &[&str],
        row: Option<&str>,
        value: &str,
        by: Role,
        position: usize,
    ) {
        self.facts.push(Fact {
            id: String::new(),
            kind,
            subject: subject.iter().map(|s| s.to_string()).collect(),
            row: row.map(str::to_string),
            value: value.to_string(),
            replaced: None,
            by,
            position,
            stated_at: None,
        });
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.usize(0..items.len())]
    }

    /// Mostly this session's analyst's habits, sometimes another's: people are not consistent.
    pub fn voice<'a>(&mut self, by_persona: [&[&'a str]; 3]) -> &'a str {
        let p = if self.rng.u8(0..10) < 7 {
            self.persona
        } else {
            self.rng.usize(0..3)
        };
        self.pick(by_persona[p])
    }

    /// Something else the user wants in the same breath.
    pub fn ask(&mut self) -> &'static str {
        if self.zh {
            self.voice([
                &[
                    "另外套餐拆分用新映射再跑一遍",
                    "顺便把队列那个 SQL 发我",
                    "欧盟的数出来了说一声",
                    "八月怎么这么低？？",
                    "发票重复那个再查一下",
                ],
                &[
                    "另外，请用更新后的映射重新跑一下套餐拆分。",
                    "请把队列表背后的查询语句也发我一份。",
                    "欧盟数据补齐后请告知。",
                    "另外烦请解释一下八月份的下滑。",
                ],
                &[
                    "另外能不能再跑一下 tier split，mapping 好像又改了（我猜？）",
                    "八月那个 dip 到底是真的还是 billing 迁移导致的，你帮我 check 一下",
                    "APAC 那块有空看看，Sam 都问两次了",
                    "队列那个 query 能不能贴一下，我想直接搬到 board deck 里",
                ],
            ])
        } else {
            self.voice([
                &[
                    "can you rerun the tier split with the new mapping",
                    "also pls send me the cohort query",
                    "and lmk when the EU numbers are in",
                    "also why is Aug so low??",
                    "can u check the dupes in invoices again",
                    "and pls don't forget the APAC breakdown",
                ],
                &[
                    "Could you also rerun the tier breakdown with the updated mapping?",
                    "Please also send me the query behind the cohort table.",
                    "Could you let me know once the EU figures are complete?",
                    "I would also appreciate an explanation for the dip in August.",
                    "Please re-check the invoice duplicates as well.",
                ],
                &[
                    "can you also — if it's not too much trouble — rerun the tier split, the mapping changed again (I think?)",
                    "also I keep wondering whether August is real or just the billing migration, could you poke at that",
                    "and when you get a sec, the APAC thing, Sam asked twice already",
                    "oh and the cohort query, can you paste it somewhere, I want to steal it for the board deck",
                ],
            ])
        }
    }

    /// A short acknowledgement from the assistant.
    pub fn ack(&mut self) -> String {
        if self.zh {
            self.pick(&[
                "收到。",
                "好的，我记下了。",
                "明白，继续。",
                "了解，我按这个来。",
                "好。",
            ])
            .to_string()
        } else {
            self.pick(&[
                "Got it.",
                "Noted, thanks.",
                "Understood, carrying on.",
                "Will do.",
                "Makes sense — continuing with the tier split.",
                "OK.",
            ])
            .to_string()
        }
    }

    /// Chit-chat from the user.
    pub fn chat_line(&mut self) -> String {
        if self.zh {
            self.voice([
                &["谢谢！", "VPN 又断了……", "有进展吗", "哈哈好", "👍", "嗯"],
                &[
                    "有进展吗？",
                    "这个比我预想的低。",
                    "看起来还算合理。",
                    "第三个月之后的留存曲线是什么样的？",
                    "欧盟的数字能再核对一下吗？",
                ],
                &[
                    "我去倒杯咖啡，十分钟回来",
                    "我两点前都在开会，你先继续",
                    "刚在开会，现在进行到哪了？",
                    "嗯，有意思，跟我的直觉不太一样",
                ],
            ])
            .to_string()
        } else {
            self.voice([
                &[
                    "thanks!",
                    "ugh the VPN dropped again",
                    "any progress?",
                    "lol ok",
                    "👍",
                    "hm",
                    "k",
                ],
                &[
                    "Any progress?",
                    "That is lower than I expected.",
                    "Looks plausible to me.",
                    "What does retention look like after month three?",
                    "Could you double-check the EU numbers?",
                ],
                &[
                    "coffee break, back in 10",
                    "in meetings till 2, just carry on",
                    "sorry, was on a call — where are we?",
                    "interesting, not what my gut said at all",
                    "Sam says hi, he's very excited about the memo (he isn't)",
                ],
            ])
            .to_string()
        }
    }

    /// The assistant's few words before a tool call, often none.
    pub fn lead(&mut self) -> String {
        if self.zh {
            self.pick(&[
                "",
                "",
                "先做个快速检查。",
                "再看一下。",
                "我确认一下。",
                "再跑一次看看。",
            ])
            .to_string()
        } else {
            self.pick(&[
                "",
                "",
                "Quick sanity check.",
                "Checking again.",
                "Let me verify that.",
                "One more look.",
            ])
            .to_string()
        }
    }

    /// Wraps a sentence the way this user writes: sometimes with chatter before or after, on the
    /// same line or the next.
    pub fn wrap_user(&mut self, text: String) -> String {
        let mut out = String::new();
        if self.rng.u8(0..3) == 0 {
            let chat = self.chat_line();
            out.push_str(&chat);
            if self.rng.bool() {
                out.push('\n');
            } else if !self.zh {
                out.push(' ');
            } else if !chat.ends_with(['。', '？', '！', '…', '?', '👍']) {
                out.push('。');
            }
        }
        out.push_str(&text);
        if self.rng.u8(0..3) == 0 {
            out.push('\n');
            out.push_str(&self.chat_line());
        }
        out
    }
}
