//! The independent analyst generator plants what it says it plants, where it says, in both
//! languages, with the noise a long session has.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use decima_core::Role;
use decima_testkit::analyst_conversation::{AnalystConversationBuilder, AnalystFactKind, Language};

#[test]
fn facts_are_where_they_say_in_both_languages() {
    for language in [Language::English, Language::Chinese] {
        let built = AnalystConversationBuilder::new(5, 3_000, language).build();
        assert_eq!(built.messages.len(), 3_000);
        for f in &built.facts {
            let m = &built.messages[f.position - 1];
            assert!(m.content.contains(&f.text), "{f:?} not in {:?}", m.content);
            match (f.by_user, f.kind) {
                (true, _) => assert_eq!(m.role, Role::User, "{f:?}"),
                (false, AnalystFactKind::Literal) => {
                    assert!(matches!(m.role, Role::Assistant | Role::Tool), "{f:?}")
                }
                (false, _) => assert_eq!(m.role, Role::Assistant, "{f:?}"),
            }
        }
        let labels: HashSet<&str> = built
            .facts
            .iter()
            .filter(|f| f.kind == AnalystFactKind::Literal)
            .map(|f| f.label)
            .collect();
        for label in [
            "decimal",
            "host:port",
            "ipv4:port",
            "ipv6",
            "email",
            "commit",
            "version",
            "semver rc",
            "datetime+zone",
            "iso datetime",
            "ticket",
            "issue number",
            "quoted",
            "backticked key",
            "home path",
            "windows path",
            "path",
            "https url",
            "s3 url",
            "percent",
            "money",
            "number+unit",
        ] {
            assert!(labels.contains(label), "{language:?}: no {label} literal");
        }
        for kind in [AnalystFactKind::Decision, AnalystFactKind::Constraint] {
            let by_user = built
                .facts
                .iter()
                .filter(|f| f.kind == kind && f.by_user)
                .count();
            assert!(by_user > 0, "{language:?}: no {kind:?} by the user");
        }
        assert!(
            built
                .facts
                .iter()
                .any(|f| f.kind == AnalystFactKind::Literal && !f.by_user && {
                    built.messages[f.position - 1].role == Role::Tool
                }),
            "literals printed by tools"
        );
        // The goal message carries constraints beyond its first sentence.
        let goal_constraints = built
            .facts
            .iter()
            .filter(|f| f.position == 2 && f.kind == AnalystFactKind::Constraint)
            .count();
        assert_eq!(goal_constraints, 2);
        let text: String = built.messages.iter().map(|m| m.content.as_str()).collect();
        match language {
            Language::Chinese => assert!(text.contains("流失") && text.contains("。")),
            Language::English => assert!(text.contains("churn") && !text.contains("流失")),
        }
        // Repeated and near-identical operations make up much of the session.
        let commands: Vec<&str> = built
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.arguments.as_str()))
            .collect();
        let distinct: HashSet<&&str> = commands.iter().collect();
        assert!(commands.len() > 600, "{} tool calls", commands.len());
        assert!(
            commands
                .iter()
                .filter(|c| c.contains("grep -c ERROR"))
                .count()
                > 100,
            "the same command polled again and again"
        );
        assert!(distinct.len() > 200, "near-identical commands differ");
    }
}

#[test]
fn facts_spread_over_the_whole_session() {
    let built = AnalystConversationBuilder::new(9, 20_000, Language::English).build();
    let last = built.facts.iter().map(|f| f.position).max().unwrap_or(0);
    let first_body = built
        .facts
        .iter()
        .filter(|f| f.position > 2)
        .map(|f| f.position)
        .min()
        .unwrap_or(0);
    assert!(first_body < 1_000 && last > 18_000, "{first_body}..{last}");
    let few = AnalystConversationBuilder::new(9, 2_000, Language::Chinese)
        .fact_beats(10)
        .build();
    assert!(few.facts.len() < 30, "{}", few.facts.len());
}
