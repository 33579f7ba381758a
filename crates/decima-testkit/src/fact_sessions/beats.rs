//! Beats stated in conversation: a value in a clause, a correction, a decision, a constraint,
//! and a requirement the assistant plays back.

use decima_core::Role;

use super::FactKind;
use super::generator::{Gen, Pending};
use super::pools::{CHOICES, LIMITS, PARAMS, REQUIREMENTS};
use super::shapes;

/// Fills `{s}`, `{v}`, `{o}` and `{ask}` in a template.
fn fill(template: &str, s: &str, v: &str, o: &str, ask: &str) -> String {
    template
        .replace("{s}", s)
        .replace("{o}", o)
        .replace("{ask}", ask)
        .replace("{v}", v)
}

impl Gen {
    /// The phrases naming a parameter in this session's language.
    fn param_subject(&self, i: usize) -> &'static [&'static str] {
        if self.zh { PARAMS[i].zh } else { PARAMS[i].en }
    }

    fn choice_subject(&self, i: usize) -> &'static [&'static str] {
        if self.zh {
            CHOICES[i].zh
        } else {
            CHOICES[i].en
        }
    }

    /// Three different options of a choice, in a random order. Every choice has three.
    fn options(&mut self, i: usize) -> (String, String, String) {
        let opts = if self.zh {
            CHOICES[i].zh_opts
        } else {
            CHOICES[i].en_opts
        };
        let n = opts.len();
        let a = self.rng.usize(0..n);
        let b = (a + 1) % n;
        let c = (a + 2) % n;
        if self.rng.bool() {
            (
                opts[a].to_string(),
                opts[b].to_string(),
                opts[c].to_string(),
            )
        } else {
            (
                opts[a].to_string(),
                opts[c].to_string(),
                opts[b].to_string(),
            )
        }
    }

    /// A user sentence stating a parameter in passing, with something else asked alongside.
    fn clause_text(&mut self, s: &str, v: &str) -> String {
        let ask = self.ask();
        let frame = if self.zh {
            self.voice([
                &[
                    "对了，{s}是 {v}。{ask}",
                    "顺便说下，{s}定的是 {v}，{ask}",
                    "{s}={v}（Jonas 说的）\n{ask}",
                ],
                &[
                    "补充两点：第一，{s}为 {v}，今早已与财务确认；第二，{ask}",
                    "需要说明的是，本次分析的{s}按 {v} 执行，以签字版计划表为准。\n{ask}",
                ],
                &[
                    "ok 先说下 context：{s}现在是 {v}，上周刚改的，说来话长。{ask}",
                    "{ask}\n然后 keep in mind {s}是 {v}，别用老 dashboard 上的数",
                ],
            ])
        } else {
            self.voice([
                &[
                    "btw {s} is {v} — {ask}",
                    "fwiw the {s} we agreed on is {v}. {ask}",
                    "oh and {s} = {v} (per Jonas)\n{ask}",
                ],
                &[
                    "Two things. First, the {s} is {v}; finance confirmed this morning. Second: {ask}",
                    "For the record, the {s} is {v}, as per the signed-off planning sheet. {ask}",
                    "Quick note: the {s} is {v} for this analysis, please use that throughout.\n{ask}",
                ],
                &[
                    "ok so — {ask} and while you're at it keep in mind the {s} is {v}, not whatever the old dashboard says",
                    "{ask} (context: the {s} is {v} now, Priya changed it last week, long story)",
                    "hmm, before I forget, the {s} is {v}. I only found out in the hallway. {ask}",
                ],
            ])
        };
        fill(frame, s, v, "", ask)
    }

    /// A decision as the user puts it.
    fn user_decision_text(&mut self, s: &str, v: &str, o: &str) -> String {
        let frame = if self.zh {
            self.voice([
                &["那就{s}用{v}吧，{o}评审肯定过不了。", "{s}就{v}，定了"],
                &[
                    "经过比较，{s}请采用{v}，与董事会材料口径一致。",
                    "关于{s}：采用{v}，后续不再调整。",
                ],
                &[
                    "我想了一晚上，{s}还是用{v}吧？嗯，就{v}",
                    "我倾向于{s}用{v}，{o}之前踩过坑（Q1 那次，别问）",
                ],
            ])
        } else {
            self.voice([
                &[
                    "ok let's just go with {v} for {s}. {o} was never going to survive review anyway",
                    "{v} for {s}, final answer",
                    "meh — {v} for {s}, moving on",
                ],
                &[
                    "Having considered both options, please use {v} for {s}; it is what the board pack used.",
                    "Decision on {s}: {v}. Please do not revisit it.",
                ],
                &[
                    "hmm, I'd rather use {v} for {s} — {o} has bitten us before (the Q1 fiasco, don't ask)",
                    "so I slept on it and I think {v} for {s}? yes. {v}. let's do that",
                ],
            ])
        };
        fill(frame, s, v, o, "")
    }

    pub(super) fn user_clause(&mut self) -> bool {
        let Some(i) = self.params.pop() else {
            return false;
        };
        let subject = self.param_subject(i);
        let value = shapes::render(&mut self.rng, PARAMS[i].shape, self.zh);
        let text = self.clause_text(subject[0], &value);
        let text = self.wrap_user(text);
        let pos = self.pos();
        self.say(Role::User, text);
        self.fact(FactKind::UserClause, subject, &value, Role::User, pos);
        let ack = self.ack();
        self.say(Role::Assistant, ack);
        true
    }

    /// States a value (a parameter or a choice) that a later correction replaces.
    pub(super) fn setup(&mut self) -> bool {
        let pos = self.pos();
        let pending = if self.rng.u8(0..3) == 0 && !self.choices.is_empty() {
            let Some(i) = self.choices.pop() else {
                return false;
            };
            let subject = self.choice_subject(i);
            // The alternative the user waves away is neither the old nor the new value.
            let (old, new, other) = self.options(i);
            let text = self.user_decision_text(subject[0], &old, &other);
            let text = self.wrap_user(text);
            self.say(Role::User, text);
            Pending {
                subject: subject.iter().map(|s| s.to_string()).collect(),
                old,
                new,
                stated_at: pos,
                choice: true,
            }
        } else {
            let Some(i) = self.params.pop() else {
                return false;
            };
            let subject = self.param_subject(i);
            let old = shapes::render(&mut self.rng, PARAMS[i].shape, self.zh);
            let new = shapes::render_other(&mut self.rng, PARAMS[i].shape, self.zh, &old);
            let text = self.clause_text(subject[0], &old);
            let text = self.wrap_user(text);
            self.say(Role::User, text);
            Pending {
                subject: subject.iter().map(|s| s.to_string()).collect(),
                old,
                new,
                stated_at: pos,
                choice: false,
            }
        };
        self.pending.push_back(pending);
        let ack = self.ack();
        self.say(Role::Assistant, ack);
        true
    }

    /// A correction: of a value stated several beats ago if one is waiting, otherwise of one
    /// stated right here (in the same message, or a message or two before).
    pub(super) fn correction(&mut self) -> bool {
        if let Some(p) = self.pending.pop_front() {
            self.correct(p, true);
            return true;
        }
        let choice = self.rng.u8(0..3) == 0 && !self.choices.is_empty();
        let (subject, old, new, other) = if choice {
            let Some(i) = self.choices.pop() else {
                return false;
            };
            let (new, old, other) = self.options(i);
            (self.choice_subject(i), old, new, other)
        } else {
            let Some(i) = self.params.pop() else {
                return false;
            };
            let old = shapes::render(&mut self.rng, PARAMS[i].shape, self.zh);
            let new = shapes::render_other(&mut self.rng, PARAMS[i].shape, self.zh, &old);
            (self.param_subject(i), old, new, String::new())
        };
        let s = subject[0];
        let pos = self.pos();
        if !choice && self.rng.u8(0..5) == 0 {
            // Corrected in the same breath.
            let ask = self.ask();
            let frame = if self.zh {
                self.pick(&[
                    "对了，{s}是 {o}——不对，是 {v}，我看成去年的表了。{ask}",
                    "{s}是 {o}……啊不是，{v}。表太多了。{ask}",
                ])
            } else {
                self.pick(&[
                    "btw the {s} is {o} — no wait, {v}, I was looking at last year's tab. {ask}",
                    "the {s} we agreed on is {o}... sorry, {v}. too many spreadsheets. {ask}",
                    "Please note the {s} is {o}, correction, {v} (the {o} figure was the draft). {ask}",
                ])
            };
            let text = fill(frame, s, &new, &old, ask);
            self.say(Role::User, text);
            self.facts.push(super::Fact {
                id: String::new(),
                kind: FactKind::Correction,
                subject: subject.iter().map(|s| s.to_string()).collect(),
                row: None,
                value: new,
                replaced: Some(old),
                by: Role::User,
                position: pos,
                stated_at: Some(pos),
            });
            let ack = self.ack();
            self.say(Role::Assistant, ack);
            return true;
        }
        let text = if choice {
            self.user_decision_text(s, &old, &other)
        } else {
            self.clause_text(s, &old)
        };
        let text = self.wrap_user(text);
        self.say(Role::User, text);
        match self.rng.u8(0..3) {
            0 => {
                let ack = self.ack();
                self.say(Role::Assistant, ack);
            }
            1 => self.noise_tool(),
            _ => {}
        }
        let pending = Pending {
            subject: subject.iter().map(|s| s.to_string()).collect(),
            old,
            new,
            stated_at: pos,
            choice,
        };
        self.correct(pending, false);
        true
    }

    /// The user's correcting message and the assistant's reply. Far from the original statement
    /// the user names the subject; right after it they often do not, and then the assistant's
    /// reply says what changed.
    fn correct(&mut self, p: Pending, far: bool) {
        let s = p.subject.first().cloned().unwrap_or_default();
        let bare = !far && self.rng.bool();
        let choice = p.choice;
        let frame = match (self.zh, bare, choice) {
            (false, true, _) => self.pick(&[
                "sorry, it's {v}, not {o}",
                "actually make that {v}",
                "wait no — {v}. {o} was last year's number",
                "typo, I meant {v}",
                "scratch that, use {v}",
                "Apologies, I misspoke: {v}, not {o}.",
            ]),
            (true, true, _) => self.pick(&[
                "不对，应该是 {v}",
                "改成 {v}",
                "打错了，是 {v} 不是 {o}",
                "刚才那个数说错了，用 {v}",
                "更正：是 {v}，不是 {o}。",
            ]),
            (false, false, false) => self.pick(&[
                "Correction: the {s} is {v}, not {o}.",
                "scratch that — use {v} for the {s}, {o} was from the old deck",
                "Update on the {s}: finance moved it to {v}.",
                "hmm no, the {s} I gave you earlier was the draft figure. the signed-off one is {v}",
                "Please disregard what I said about the {s} earlier; it should be {v}.",
                "heads up, the {s} changed: {v} now (not {o})",
                "ugh, I got the {s} wrong before — it's {v}",
            ]),
            (true, false, false) => self.pick(&[
                "更正：{s}是 {v}，不是 {o}。",
                "{s}改成 {v}，之前说的 {o} 作废。",
                "不对，{s}应该是 {v}，我之前看错表了。",
                "刚跟财务确认过，{s}现在是 {v}。",
                "之前说的{s}有误，以 {v} 为准。",
                "{s}那个数我说错了，是 {v}",
            ]),
            (false, false, true) => self.pick(&[
                "scratch that — {v} for {s}, not {o}. the CFO wants it comparable with last year",
                "Changed my mind on {s}: {v} instead of {o}.",
                "ok after talking to Lena: {s} should be {v} after all",
                "Actually, let's not do {o} for {s}. {v}.",
            ]),
            (true, false, true) => self.pick(&[
                "{s}还是改用{v}吧，不用{o}了，CFO 要和去年可比。",
                "改主意了，{s}用{v}，不用{o}。",
                "跟 Lena 聊完，{s}最后还是定{v}。",
            ]),
        };
        let text = fill(frame, &s, &p.new, &p.old, "");
        let text = if far { self.wrap_user(text) } else { text };
        let pos = self.pos();
        self.say(Role::User, text);
        let restate = bare || self.rng.bool();
        let reply = if restate {
            let frame = if self.zh {
                self.pick(&[
                    "好的，{s}按 {v} 来，之前的 {o} 不再使用。",
                    "收到，{s}已更新为 {v}。",
                    "明白，{s}改为 {v}，我重新跑一下受影响的步骤。",
                ])
            } else {
                self.pick(&[
                    "Got it — {s} is now {v} (was {o}). I'll rerun the affected steps.",
                    "OK, using {v} for the {s} from here on.",
                    "Updated: {s} → {v}.",
                    "Thanks — switching the {s} to {v} and re-running the cohort queries.",
                ])
            };
            fill(frame, &s, &p.new, &p.old, "")
        } else {
            self.ack()
        };
        self.say(Role::Assistant, reply);
        self.facts.push(super::Fact {
            id: String::new(),
            kind: FactKind::Correction,
            subject: p.subject,
            row: None,
            value: p.new,
            replaced: Some(p.old),
            by: Role::User,
            position: pos,
            stated_at: Some(p.stated_at),
        });
    }

    pub(super) fn decision(&mut self) -> bool {
        let Some(i) = self.choices.pop() else {
            return false;
        };
        let subject = self.choice_subject(i);
        let s = subject[0];
        let (v, o, _) = self.options(i);
        let pos = self.pos();
        if self.rng.u8(0..5) < 3 {
            let text = self.user_decision_text(s, &v, &o);
            let text = self.wrap_user(text);
            self.say(Role::User, text);
            self.fact(FactKind::Decision, subject, &v, Role::User, pos);
            let ack = self.ack();
            self.say(Role::Assistant, ack);
        } else {
            let frame = if self.zh {
                self.pick(&[
                    "接下来{s}统一用{v}，{o}在不同队列上结果不稳定。",
                    "{s}我定为{v}，这样和财务的提数口径一致，总数能对上。",
                    "用上季度的数据比较过之后，{s}我选了{v}而不是{o}。",
                ])
            } else {
                self.pick(&[
                    "I'll use {v} for {s} from here on; {o} gave unstable results across cohorts.",
                    "Going with {v} for {s} — it matches the finance extract, so totals will reconcile.",
                    "After comparing both on last quarter's data, I've settled on {v} for {s} rather than {o}.",
                ])
            };
            let mut text = self.prose(1);
            text.push_str(if self.zh { "" } else { " " });
            text.push_str(&fill(frame, s, &v, &o, ""));
            self.say(Role::Assistant, text);
            self.fact(FactKind::Decision, subject, &v, Role::Assistant, pos);
            let reply = self.chat_line();
            self.say(Role::User, reply);
        }
        true
    }

    pub(super) fn constraint(&mut self) -> bool {
        let Some(i) = self.limits.pop() else {
            return false;
        };
        let limit = &LIMITS[i];
        let (subject, lines) = if self.zh {
            (limit.zh, limit.zh_lines)
        } else {
            (limit.en, limit.en_lines)
        };
        let value = shapes::render(&mut self.rng, limit.shape, self.zh);
        let line = self.pick(lines).replace("{v}", &value);
        let text = self.wrap_user(line);
        let pos = self.pos();
        self.say(Role::User, text);
        self.fact(FactKind::Constraint, subject, &value, Role::User, pos);
        let ack = self.ack();
        self.say(Role::Assistant, ack);
        true
    }

    /// The user states one or two requirements loosely; a little later the assistant plays them
    /// back with their values, and the user only agrees.
    pub(super) fn restatement(&mut self) -> bool {
        let Some(first) = self.requirements.pop() else {
            return false;
        };
        let mut picked = vec![first];
        if self.rng.u8(0..3) == 0
            && let Some(second) = self.requirements.pop()
        {
            picked.push(second);
        }
        let zh = self.zh;
        let vague: Vec<&str> = picked
            .iter()
            .map(|&i| {
                let r = &REQUIREMENTS[i];
                let options = if zh { r.vague_zh } else { r.vague_en };
                options[self.rng.usize(0..options.len())]
            })
            .collect();
        let joined = if zh {
            vague.join("，还有")
        } else {
            vague.join(", and ")
        };
        let frame = if zh {
            self.voice([
                &["{x}。"],
                &["备忘录的要求：{x}。"],
                &["对了，memo 那边，{x}，你懂的"],
            ])
        } else {
            self.voice([
                &["{x}. thx"],
                &["For the memo: {x}."],
                &["oh and for the memo — {x}, you know the drill"],
            ])
        };
        let text = self.wrap_user(frame.replace("{x}", &joined));
        self.say(Role::User, text);
        if self.rng.bool() {
            self.noise_tool();
        }
        let values: Vec<String> = picked
            .iter()
            .map(|&i| shapes::render(&mut self.rng, REQUIREMENTS[i].shape, zh))
            .collect();
        let bullets = self.rng.u8(0..3) == 0;
        let text = if bullets {
            let mut out = if zh {
                "开始写之前我先对一下需求：\n".to_string()
            } else {
                "Before I draft anything, here's what I'm working from:\n".to_string()
            };
            for (&i, v) in picked.iter().zip(&values) {
                let r = &REQUIREMENTS[i];
                if zh {
                    out.push_str(&format!("- {}：{v}\n", r.label.1));
                } else {
                    out.push_str(&format!("- {}: {v}\n", r.label.0));
                }
            }
            let extra = if zh {
                self.pick(&[
                    "- 按套餐档位和地区拆分",
                    "- 不回写数仓",
                    "- 语言通俗，少用术语",
                ])
            } else {
                self.pick(&[
                    "- split by plan tier and region",
                    "- no writes to the warehouse",
                    "- plain language, no jargon",
                ])
            };
            out.push_str(extra);
            out.push('\n');
            out.push_str(if zh {
                "没问题的话我就开始了。"
            } else {
                "Correct?"
            });
            out
        } else {
            let clauses: Vec<String> = picked
                .iter()
                .zip(&values)
                .map(|(&i, v)| {
                    let r = &REQUIREMENTS[i];
                    if zh { r.clause_zh } else { r.clause_en }.replace("{v}", v)
                })
                .collect();
            let joined = if zh {
                clauses.join("，并且")
            } else {
                clauses.join(", and ")
            };
            let frame = if zh {
                self.pick(&[
                    "确认一下，你是希望{x}，对吗？",
                    "我复述一下需求：{x}。有不对的地方随时说。",
                ])
            } else {
                self.pick(&[
                    "To confirm: {x}.",
                    "Just so we're on the same page — {x}, right?",
                    "Let me play that back before I start: {x}. Shout if that's wrong.",
                ])
            };
            frame.replace("{x}", &joined)
        };
        let pos = self.pos();
        self.say(Role::Assistant, text);
        for (&i, v) in picked.iter().zip(&values) {
            let r = &REQUIREMENTS[i];
            let subject = if zh { r.zh } else { r.en };
            self.fact(FactKind::Restatement, subject, v, Role::Assistant, pos);
        }
        let reply = if zh {
            self.pick(&["对", "没错", "👍", "是的，开始吧"])
        } else {
            self.pick(&[
                "yep",
                "exactly",
                "👍",
                "Correct, go ahead.",
                "yes — that's it",
            ])
        };
        self.say(Role::User, reply.to_string());
        true
    }
}
