//! End-to-end checks of statements, from messages to the rendered summary and back: the
//! defects the held-out check found (bare values under "User literals", a tool's number without
//! its label, spaced literals cut, a restatement dropped, a corrected value shown beside its
//! replacement), in the issue's words and in others.

use super::{Detail, Digest, Origin, Source, Speaker, StatementKind, at};
use crate::{EstimateCounter, ToolCall};

fn facts_section(text: &str) -> String {
    text.split("## ")
        .filter(|s| s.starts_with("Facts\n"))
        .collect::<String>()
}

#[test]
fn a_correction_states_the_current_value_and_notes_the_old() {
    let d = Digest::from_sources([
        at(
            1,
            Speaker::User,
            "Goal: flag slow requests in the gateway logs.",
        ),
        at(
            4,
            Speaker::User,
            "The alert threshold is 12 ms and the window is 5 minutes.",
        ),
        at(5, Speaker::Assistant, "Got it."),
        at(9, Speaker::User, "sorry, it is 15, not 12"),
    ]);
    let text = d.render(Detail::Standard);
    let facts = facts_section(&text);
    assert!(
        facts.contains("- (seq 9, user) The alert threshold is 15 ms (replaces 12 ms)\n"),
        "{text}"
    );
    assert!(
        facts.contains("- (seq 4, user) the window is 5 minutes"),
        "{text}"
    );
    // The old value is never listed as if current.
    for line in text.lines().filter(|l| l.contains("12 ms")) {
        assert!(line.contains("replaces 12 ms"), "stale: {line}\n{text}");
    }
    assert!(!text.contains("User literals"), "{text}");
}

#[test]
fn corrections_in_other_words_and_in_chinese() {
    let d = Digest::from_sources([
        at(0, Speaker::User, "Goal: renew the hosting contract."),
        at(
            1,
            Speaker::User,
            "Heads up: the SLA target is 99.95% for the EU tenants.",
        ),
        at(2, Speaker::User, "The vendor's payout limit is €250,000."),
        at(3, Speaker::User, "Oops, I meant 99.9%."),
        at(6, Speaker::User, "Keep the retention period at 30 days."),
        at(8, Speaker::User, "Scratch that, make it 45 days."),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains(
            "(seq 3, user) Heads up: the SLA target is 99.9% for the EU tenants. (replaces 99.95%)"
        ),
        "{text}"
    );
    assert!(text.contains("payout limit is €250,000."), "{text}");
    assert!(!text.contains("€250,000 ("), "{text}");
    assert!(
        text.contains("(seq 8, user) Keep the retention period at 45 days. (replaces 30 days)"),
        "{text}"
    );

    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：核对第三季度的流失率。"),
        at(2, Speaker::User, "流失窗口是45天，报告币种是欧元。"),
        at(5, Speaker::User, "不对，流失窗口改成60天。"),
        at(7, Speaker::User, "风险阈值定为0.85。"),
        at(9, Speaker::User, "应该是0.8，不是0.85。"),
    ]);
    let text = d.render(Detail::Standard);
    let facts = facts_section(&text);
    // "改成" is a decision cue: the correction stands whole among the decisions, and the
    // statement it replaced is gone.
    assert!(text.contains("- 不对，流失窗口改成60天。\n"), "{text}");
    assert!(!text.contains("流失窗口是45"), "{text}");
    assert!(facts.contains("(seq 2, user) 报告币种是欧元。"), "{text}");
    assert!(
        facts.contains("(seq 9, user) 风险阈值定为0.8。 (replaces 0.85)"),
        "{text}"
    );
}

#[test]
fn spaced_literals_and_names_stay_whole_with_their_subject() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: pay the Lisbon supplier."),
        at(
            2,
            Speaker::User,
            "Their IBAN is DE89 3704 0044 0532 0130 00, and the contact is Ana Sofia Ramos.",
        ),
        at(
            3,
            Speaker::User,
            "Call her on +351 912 345 678 if the bank asks.",
        ),
        at(
            4,
            Speaker::User,
            "The approved budget is 1 234 567,89 € for the year.",
        ),
    ]);
    let text = d.render(Detail::Deep);
    for keep in [
        "(seq 2, user) Their IBAN is DE89 3704 0044 0532 0130 00",
        "(seq 2, user) the contact is Ana Sofia Ramos.",
        "(seq 3, user) Call her on +351 912 345 678 if the bank asks.",
    ] {
        assert!(text.contains(keep), "{keep} lost in\n{text}");
    }
    // "approved" makes it a decision: it stands whole in its section.
    assert!(
        text.contains("- The approved budget is 1 234 567,89 € for the year."),
        "{text}"
    );
    // A tight budget shrinks an old statement to its subject and value, never to a cut value.
    let (small, tokens) = d.render_budgeted(Detail::Deep, 60, &EstimateCounter);
    assert!(tokens <= 60, "{tokens}");
    assert!(small.contains("DE89 3704 0044 0532 0130 00") || small.contains("statement×"));
    assert!(!small.contains("DE89\n"), "{small}");
}

#[test]
fn tool_labels_and_table_rows_keep_what_a_number_measures() {
    let calls = [
        ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"python3 scan.py --month 2026-09"}"#.into(),
        },
        ToolCall {
            id: "c2".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"psql -c 'select region, revenue, churn from q3'"}"#.into(),
        },
    ];
    let call = |i: usize, seq: i64| Source {
        role: Speaker::Assistant,
        content: "",
        tool_calls: std::slice::from_ref(&calls[i]),
        tool_call_id: None,
        seq: Some(seq),
    };
    let result = |i: usize, seq: i64, content: &'static str| Source {
        role: Speaker::Tool,
        content,
        tool_calls: &[],
        tool_call_id: Some(calls[i].id.as_str()),
        seq: Some(seq),
    };
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: find where churn went up."),
        call(0, 2),
        result(
            0,
            3,
            "scanning...\nRows scanned ........ 1,204,331\nduplicates: 87\np95 latency = 412 ms\n",
        ),
        call(1, 4),
        result(
            1,
            5,
            " region | revenue | churn\n--------+---------+-------\n EMEA   | 1.2M    | 3.4%\n APAC   | 0.8M    | 5.1%\n(2 rows)\n",
        ),
    ]);
    let text = d.render(Detail::Deep);
    for keep in [
        "  - (seq 3, tool) Rows scanned: 1,204,331",
        "  - (seq 3, tool) duplicates: 87",
        "  - (seq 3, tool) p95 latency: 412 ms",
        "  - (seq 5, tool) region EMEA: revenue 1.2M; churn 3.4%",
        "  - (seq 5, tool) region APAC: revenue 0.8M; churn 5.1%",
    ] {
        assert!(text.contains(keep), "{keep} lost in\n{text}");
    }
    // No bare number without its label.
    assert!(!text.contains("- 1,204,331\n"), "{text}");
    let back = Digest::parse(&text);
    assert_eq!(back.render(Detail::Deep), text, "stable when folded");
    assert!(
        back.statements
            .iter()
            .all(|s| s.origin != Origin::Tool || s.group.is_some()),
        "{:?}",
        back.statements
    );
}

#[test]
fn a_restatement_of_the_requirement_is_kept() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: draft the renewal memo."),
        at(
            2,
            Speaker::User,
            "Finance wants it in euros, and accounts under 500 seats don't count.",
        ),
        at(
            3,
            Speaker::Assistant,
            "Let me check the data first. So the requirement is: amounts in EUR, only accounts with 500 seats or more.",
        ),
        at(4, Speaker::Assistant, "To confirm, you want:"),
        at(5, Speaker::Assistant, "Hmm, the export is slow today."),
        at(6, Speaker::Assistant, "确认一下：报告用欧元，阈值是0.85。"),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("- (seq 3, assistant) So the requirement is: amounts in EUR, only accounts with 500 seats or more."),
        "{text}"
    );
    assert!(
        text.contains("- (seq 6, assistant) 确认一下：报告用欧元，阈值是0.85。"),
        "{text}"
    );
    assert!(!text.contains("export is slow"), "{text}");
    let kinds: Vec<StatementKind> = d
        .statements
        .iter()
        .filter(|s| s.origin == Origin::Prose)
        .map(|s| s.kind)
        .collect();
    assert!(
        kinds.iter().all(|k| *k == StatementKind::Restated),
        "{kinds:?}"
    );
}

#[test]
fn code_blocks_in_messages_are_labelled_statements() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: tune the retry policy."),
        at(
            2,
            Speaker::User,
            "Here is what prod runs:\n```yaml\nretry:\n  max_attempts: 5\n  backoff_ms: 250\n```\n",
        ),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("(seq 2, user) retry.max_attempts: 5"),
        "{text}"
    );
    assert!(
        text.contains("(seq 2, user) retry.backoff_ms: 250"),
        "{text}"
    );
}

#[test]
fn statements_survive_folds_with_their_seq_and_corrections_across_ranges() {
    let first = Digest::from_sources([
        at(1, Speaker::User, "Goal: reconcile the ledger."),
        at(3, Speaker::User, "The tolerance is 0.05 EUR per invoice."),
        at(4, Speaker::User, "Our cost centre is CC-4471."),
    ]);
    let text = first.render(Detail::Standard);
    let back = Digest::parse(&text);
    assert_eq!(back.statements.len(), first.statements.len(), "{text}");
    for (a, b) in first.statements.iter().zip(&back.statements) {
        assert_eq!((a.seq, &a.text, a.origin), (b.seq, &b.text, b.origin));
    }
    // A later range corrects a value the earlier summary holds.
    let later =
        Digest::from_continuation([at(40, Speaker::User, "Correction: not 0.05, it's 0.02.")]);
    let mut merged = back;
    merged.merge(later);
    let folded = merged.render(Detail::Folded);
    assert!(
        folded
            .contains("(seq 40, user) The tolerance is 0.02 EUR per invoice. (replaces 0.05 EUR)")
            || folded
                .contains("(seq 40, user) The tolerance is 0.02 EUR per invoice. (replaces 0.05)"),
        "{folded}"
    );
    assert!(
        folded.contains("(seq 4, user) Our cost centre is CC-4471."),
        "{folded}"
    );
    assert_eq!(folded.matches("The tolerance").count(), 1, "{folded}");
}

#[test]
fn dropped_statements_are_counted_and_the_budget_is_kept() {
    let texts: Vec<String> = (0..80)
        .map(|i| format!("The quota for team {i} is {} GB.", 100 + i))
        .collect();
    let mut sources = vec![at(1, Speaker::User, "Goal: set the storage quotas.")];
    sources.extend(
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| at(i as i64 + 2, Speaker::User, t)),
    );
    let d = Digest::from_sources(sources);
    assert_eq!(
        d.statements.len(),
        80,
        "distinct subjects are distinct facts"
    );
    let (small, tokens) = d.render_budgeted(Detail::Standard, 300, &EstimateCounter);
    assert!(tokens <= 300, "{tokens}");
    let kept = small.matches("(seq ").count();
    let folded: usize = small
        .lines()
        .find_map(|l| l.split("statement×").nth(1))
        .and_then(|n| n.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert_eq!(kept + folded, 80, "{small}");
    // More fit as subject and value than whole: all that are kept are shrunk, newest first.
    assert!(
        small.contains("(seq 81, user) quota for team: 79, 179 GB"),
        "{small}"
    );
    assert!(kept > 20, "{small}");
    let (roomy, _) = d.render_budgeted(Detail::Standard, 1_200, &EstimateCounter);
    assert!(
        roomy.contains("(seq 81, user) The quota for team 79 is 179 GB."),
        "newest whole when all fit:\n{roomy}"
    );
}

#[test]
fn corrections_that_name_no_value_or_hide_it_in_chatter() {
    // A bare "no" after a filler takes back the number before it; the clause it corrects is
    // restated with the new value.
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: size the pilot."),
        at(
            2,
            Speaker::User,
            "For sizing, the pilot group is 340 seats, keep that in mind.",
        ),
        at(3, Speaker::Assistant, "Noted."),
        at(
            4,
            Speaker::User,
            "hmm no — 280. 340 included the contractors",
        ),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("(seq 4, user) For sizing, the pilot group is 280 seats"),
        "{text}"
    );
    for line in text.lines().filter(|l| l.contains("340 seats")) {
        assert!(
            line.contains("(replaces 340 seats)") || line.contains("(replaced by 280 at seq 4)"),
            "stale: {line}\n{text}"
        );
    }

    // The subject in one sentence (after chatter with a number of its own), the value in the
    // next.
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: renew the support plan."),
        at(
            5,
            Speaker::User,
            "The response target is 8 hours for P2 tickets.",
        ),
        at(
            9,
            Speaker::User,
            "back at 3, carry on — oh no, the response target I sent was the old draft. the agreed one is 6 hours",
        ),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("the response target I sent was the old draft. the agreed one is 6 hours (replaces 8 hours)"),
        "{text}"
    );
    assert!(!text.contains("back at 3"), "{text}");
    for line in text.lines().filter(|l| l.contains("8 hours")) {
        assert!(line.contains("replaces 8 hours"), "stale: {line}\n{text}");
    }
}

#[test]
fn a_correction_in_words_patches_the_decision_it_replaces() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: publish the pricing study."),
        at(
            3,
            Speaker::User,
            "Decision on the chart type: stacked bars.",
        ),
        at(
            8,
            Speaker::User,
            "forget that — small multiples for the chart type, not stacked bars.",
        ),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains(
            "Decision on the chart type: stacked bars. (replaced by small multiples at seq 8)"
        ),
        "{text}"
    );
    assert!(
        text.contains("(seq 8, user) forget that — small multiples for the chart type, not stacked bars. (replaces stacked bars)"),
        "{text}"
    );
}

#[test]
fn chinese_corrections_that_give_only_the_new_value_or_a_word() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：整理续约材料。"),
        at(2, Speaker::User, "汇报格式请采用幻灯片，和上次一致。"),
        at(4, Speaker::User, "改为 Excel 表格"),
        at(6, Speaker::User, "关于计费周期：采用自然月，之后不再改。"),
        at(8, Speaker::User, "想了想，计费周期用合同月，不用自然月。"),
        at(10, Speaker::User, "本次的试用期按 30 天 计算。"),
        at(12, Speaker::User, "前面说的试用期有误，以 14天 为准。"),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("汇报格式请采用幻灯片，和上次一致。 (replaced by Excel 表格 at seq 4)"),
        "{text}"
    );
    assert!(
        text.contains("采用自然月，之后不再改。 (replaced by 合同月 at seq 8)"),
        "{text}"
    );
    // The corrected statement is gone or marked; the correction stands.
    for line in text.lines().filter(|l| l.contains("30 天")) {
        assert!(
            line.contains("(replaced by 14天 at seq 12)"),
            "stale: {line}\n{text}"
        );
    }
    assert!(text.contains("以 14天 为准"), "{text}");
    // 用 inside 试用期 links nothing: the goal keeps its own value.
    assert!(text.contains("目标：整理续约材料。"), "{text}");
    assert!(!text.contains("目标：期有误"), "{text}");
}

#[test]
fn a_later_range_that_corrects_a_decision_of_an_earlier_summary_marks_it() {
    let first = Digest::from_sources([
        at(1, Speaker::User, "Goal: prepare the audit sample."),
        at(
            2,
            Speaker::User,
            "We decided the sample size is 120 invoices.",
        ),
    ]);
    let back = Digest::parse(&first.render(Detail::Standard));
    let later = Digest::from_continuation([at(
        70,
        Speaker::User,
        "Correction: the sample size should be 150 invoices, not 120.",
    )]);
    let mut merged = back;
    merged.merge(later);
    let text = merged.render(Detail::Folded);
    for line in text.lines().filter(|l| l.contains("120 invoices")) {
        assert!(
            line.contains("replaced by 150") || line.contains("(replaces 120"),
            "stale: {line}\n{text}"
        );
    }
    assert!(
        text.contains("(replaced by 150 invoices at seq 70)"),
        "{text}"
    );
    assert!(text.contains("150 invoices"), "{text}");
}

#[test]
fn a_playback_list_confirmed_by_a_short_question_is_kept_item_by_item() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: write the board memo."),
        at(
            2,
            Speaker::Assistant,
            "Here's my brief before I start:\n- audience: the audit committee\n- length: two pages\n- tone: neutral\nRight?",
        ),
    ]);
    let text = d.render(Detail::Standard);
    for item in [
        "(seq 2, assistant) audience: the audit committee",
        "(seq 2, assistant) length: two pages",
        "(seq 2, assistant) tone: neutral",
    ] {
        assert!(text.contains(item), "{item}\n{text}");
    }
    assert!(!text.contains("Here's my brief"), "{text}");
}

#[test]
fn company_names_with_abbreviations_and_chinese_phone_lines_stay_whole() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: send the invoices."),
        at(
            2,
            Speaker::Assistant,
            "The contract names Hartmann Logistik GmbH & Co. KG as the payer, so invoices go there.",
        ),
        at(
            3,
            Speaker::Assistant,
            "合同里写的对接人是采购部的 Lena Vogt，座机 +49 40 3012 7788。",
        ),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("Hartmann Logistik GmbH & Co. KG as the payer"),
        "{text}"
    );
    assert!(
        text.contains("对接人是采购部的 Lena Vogt，座机 +49 40 3012 7788"),
        "{text}"
    );
}

#[test]
fn a_correction_that_gives_only_its_new_value_replaces_the_latest_choice() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "Goal: split churn by plan tier."),
        at(
            2,
            Speaker::User,
            "Having compared both, please use a row of its own for Legacy tier.",
        ),
        at(3, Speaker::Assistant, "Makes sense."),
        at(4, Speaker::User, "scratch that, use Pro"),
    ]);
    let text = d.render(Detail::Standard);
    assert!(text.contains("use Pro for Legacy tier"), "{text}");
    assert!(text.contains("(replaces a row of its own)"), "{text}");

    // In Chinese: the words that admit the slip name no subject, so the correction replaces
    // the decision stated before it, and a value with a word set off by a space stays whole.
    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：按套餐拆分流失。"),
        at(
            2,
            Speaker::User,
            "经过比较，Legacy 档请采用单独一行，与董事会材料口径一致。",
        ),
        at(3, Speaker::Assistant, "了解。"),
        at(4, Speaker::User, "刚才那个数说错了，用 专业版"),
        at(5, Speaker::User, "关于异常值：采用取对数，后续不再调整。"),
        at(6, Speaker::User, "不对，应该是 p99.5 截断"),
    ]);
    let text = d.render(Detail::Standard);
    assert!(text.contains("(replaced by 专业版 at seq 4)"), "{text}");
    assert!(text.contains("(replaced by p99.5 截断 at seq 6)"), "{text}");
    assert!(!text.contains("打错"), "{text}");
}

#[test]
fn a_chinese_correction_with_both_values_replaces_the_one_it_names() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：核对汇率。"),
        at(
            2,
            Speaker::User,
            "需要说明的是，本次分析的美元兑欧元汇率按 0.9358 执行。",
        ),
        at(3, Speaker::User, "数仓刷新时间是 03:40 UTC。"),
        at(4, Speaker::User, "打错了，是 0.9115 不是 0.9358"),
        at(
            5,
            Speaker::User,
            "经过比较，日切时区请采用Asia/Shanghai，与董事会材料口径一致。",
        ),
        at(
            6,
            Speaker::User,
            "改主意了，日切时区用UTC，不用Asia/Shanghai。",
        ),
    ]);
    let text = d.render(Detail::Standard);
    let current: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("0.9358") && !l.contains("replace"))
        .collect();
    assert!(current.is_empty(), "stale: {current:?}\n{text}");
    assert!(text.contains("03:40 UTC"), "{text}");
    assert!(!text.contains("03:40 UTC (replaced"), "{text}");
    // The change of mind is a correction of the decision, not a new rule.
    let constraints = text
        .split("## ")
        .find(|s| s.starts_with("Constraints"))
        .unwrap_or("");
    assert!(!constraints.contains("改主意"), "{text}");
    assert!(text.contains("(replaced by UTC at seq 6)"), "{text}");
}

#[test]
fn an_agents_report_lines_read_back_from_a_summary_never_replace_each_other() {
    let first = Digest::from_sources([
        at(
            1,
            Speaker::User,
            "Goal: settle the outlier rule and the holdout.",
        ),
        at(2, Speaker::Assistant, "Updated: outliers → clip at p99.5."),
    ]);
    let mut merged = Digest::parse(&first.render(Detail::Standard));
    merged.merge(Digest::from_continuation([at(
        9,
        Speaker::Assistant,
        "Updated: holdout → 10%.",
    )]));
    let text = merged.render(Detail::Standard);
    assert!(
        text.contains("Updated: outliers → clip at p99.5."),
        "{text}"
    );
    assert!(text.contains("Updated: holdout → 10%."), "{text}");
    assert!(!text.contains("replaces outliers"), "{text}");
}

#[test]
fn a_choice_the_user_asks_about_then_confirms_is_a_decision() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：补全地区。"),
        at(
            2,
            Speaker::User,
            "我想了一晚上，缺失地区还是用账单国家吧？嗯，就账单国家",
        ),
        at(3, Speaker::User, "Should the holdout be 20%? yes, 20%"),
    ]);
    let text = d.render(Detail::Standard);
    let decisions = text
        .split("## ")
        .find(|s| s.starts_with("Decisions"))
        .unwrap_or("");
    assert!(
        decisions.contains("缺失地区还是用账单国家吧？嗯，就账单国家"),
        "{text}"
    );
    assert!(decisions.contains("holdout be 20%? yes, 20%"), "{text}");
}

#[test]
fn a_correction_naming_nothing_replaces_the_latest_choice_not_a_value_of_another_kind() {
    let d = Digest::from_sources([
        at(1, Speaker::User, "目标：分析流失。"),
        at(
            2,
            Speaker::User,
            "收款账户的 IBAN 是 NL38 ABNA 9263 6348 03，别弄错。",
        ),
        at(
            3,
            Speaker::User,
            "哈哈好。关于异常值：采用取对数，后续不再调整。",
        ),
        at(4, Speaker::Assistant, "收到。"),
        at(5, Speaker::User, "不对，应该是 p99.5 截断"),
        at(6, Speaker::User, "增值税率=6%（Jonas 说的）"),
    ]);
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("NL38 ABNA 9263 6348 03，别弄错。\n"),
        "{text}"
    );
    assert!(text.contains("(replaced by p99.5 截断 at seq 5)"), "{text}");
    let d = Digest::from_sources([at(1, Speaker::User, "增值税率=6%（Jonas 说的）")]);
    assert_eq!(d.literal_texts(), vec!["6%".to_string()]);
}
