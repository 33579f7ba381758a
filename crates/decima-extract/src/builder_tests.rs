use super::*;
use crate::{Detail, ToolCall, src};

#[test]
fn keeps_goal_todos_decisions_constraints_and_literals() {
    let calls = vec![ToolCall {
        id: "c1".into(),
        name: "shell".into(),
        arguments: r#"{"cmd":"wc -l /workspace/a.csv"}"#.into(),
    }];
    let sources = vec![
        src(
            Speaker::User,
            "Goal: reconcile ACC-12345 above 100 EUR. Be careful.",
        ),
        src(
            Speaker::User,
            "Remember: \"Never touch /workspace/raw\". See https://x.example.com/a?b=1.",
        ),
        src(Speaker::Assistant, "TODO: check totals\n- [ ] load data"),
        src(
            Speaker::Assistant,
            "Some prose. Decision: exclude batch 7. We will use prompt-uuid-123 too.",
        ),
        Source {
            role: Speaker::Assistant,
            content: "",
            tool_calls: &calls,
            tool_call_id: None,
            seq: None,
        },
        Source {
            role: Speaker::Tool,
            content: "exit_code=2\nno such file\n",
            tool_calls: &[],
            tool_call_id: Some("c1"),
            seq: None,
        },
        src(Speaker::Assistant, "- [x] load data"),
    ];
    let d = Digest::from_sources(sources);
    assert_eq!(
        d.goal,
        vec!["Goal: reconcile ACC-12345 above 100 EUR. Be careful."],
        "the goal message is kept whole"
    );
    assert_eq!(d.todos, vec!["TODO: check totals", "- [x] load data"]);
    assert_eq!(d.decisions.len(), 2);
    assert_eq!(
        d.constraints,
        vec!["Remember: \"Never touch /workspace/raw\"."]
    );
    assert_eq!(d.operations[0].exits.get("2"), Some(&1));
    for lit in [
        "ACC-12345",
        "100 EUR",
        "\"Never touch /workspace/raw\"",
        "https://x.example.com/a?b=1",
        "prompt-uuid-123",
        "/workspace/a.csv",
    ] {
        assert!(
            d.literals.iter().any(|l| l.text == lit),
            "{lit} in {:?}",
            d.literals
        );
    }
    let text = d.render(Detail::Standard);
    assert!(
        text.contains("- shell cmd=wc -l /workspace/a.csv → exit 2"),
        "{text}"
    );
    assert!(text.contains("  | no such file"));
    let deep = d.render(Detail::Deep);
    assert!(!deep.contains("  | no such file"));
    let folded = d.render(Detail::Folded);
    for lit in &d.literals {
        for t in [&text, &deep, &folded] {
            assert!(t.contains(lit.text.as_str()), "{} lost in\n{t}", lit.text);
        }
    }
    assert_eq!(d.render(Detail::Standard), text, "deterministic");
}

#[test]
fn later_ranges_do_not_take_a_user_message_as_the_goal() {
    let d = Digest::from_continuation([src(Speaker::User, "Remember to check 12.5 ms.")]);
    assert!(d.goal.is_empty());
    let d = Digest::from_continuation([src(Speaker::User, "New goal: find the 0.8375 cut.")]);
    assert_eq!(d.goal.len(), 1);
}
