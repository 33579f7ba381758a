//! Full-text search against a real SQLite file: what it finds (substrings, any case, Chinese,
//! tool calls, short terms), what it must not (rolled-back messages, deleted conversations), how
//! pages hold together, hostile queries, and a history written before the index existed.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use decima_core::{ConversationId, NewMessage, Role, ToolCall};
use decima_store::{SearchPage, SearchQuery, Store};
use decima_testkit::ConversationBuilder;

async fn find(store: &Store, text: &str) -> SearchPage {
    search(store, text, None, None, 50).await
}

async fn search(
    store: &Store,
    text: &str,
    conversation: Option<ConversationId>,
    before: Option<i64>,
    limit: u32,
) -> SearchPage {
    store
        .search()
        .messages(&SearchQuery {
            text,
            conversation,
            before,
            limit,
        })
        .await
        .unwrap()
}

fn seqs(page: &SearchPage) -> Vec<i64> {
    page.hits.iter().map(|h| h.seq).collect()
}

/// A 10,000-message generated history with a few messages an analyst would look for planted
/// at known seqs, deep and shallow.
async fn planted(store: &Store) -> ConversationId {
    let mut messages = ConversationBuilder::new(7, 10_000).build().messages;
    messages[36] = NewMessage::new(
        Role::User,
        "Pay the refund to IBAN DE44 5001 0517 5407 3249 31, not the old account.",
    );
    messages[4_999] = NewMessage::new(Role::Assistant, "FY2023 revenue restated: 4.2M EUR");
    messages[7_000] = NewMessage::new(Role::User, "华东区的客户流失率在九月上升到了百分之七。");
    messages[8_000] = NewMessage {
        tool_calls: vec![ToolCall {
            id: "call_9".into(),
            name: "shell".into(),
            arguments: r#"{"command":"duckdb -c 'select count(*) from ledger_q3'"}"#.into(),
            signature: None,
        }],
        ..NewMessage::new(Role::Assistant, "")
    };
    store
        .conversations()
        .import("planted", None, &messages)
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn finds_planted_text_deep_in_a_long_history_by_substring_in_any_case() {
    let (_dir, store) = common::temp_store().await;
    let id = planted(&store).await;

    let iban = find(&store, "5407 3249").await;
    assert_eq!(seqs(&iban), vec![37]);
    let hit = &iban.hits[0];
    assert_eq!(
        (hit.conversation_id, hit.conversation_title.as_str()),
        (id, "planted")
    );
    assert_eq!(hit.role, Role::User);
    assert_eq!(hit.snippet.matched, "5407");
    assert!(
        hit.snippet
            .after
            .starts_with(" 3249 31, not the old account."),
        "{:?}",
        hit.snippet
    );

    // The middle of a word, in another case.
    let fy = find(&store, "y2023 REVENUE").await;
    assert_eq!(seqs(&fy), vec![5_000]);
    assert_eq!(fy.hits[0].snippet.matched, "Y2023");

    // Chinese, which has no spaces to split words on: three characters through the index, two
    // through the scan.
    assert_eq!(seqs(&find(&store, "流失率").await), vec![7_001]);
    assert_eq!(seqs(&find(&store, "流失").await), vec![7_001]);

    // A tool call's arguments are searched; the snippet shows them when the text is empty.
    let duck = find(&store, "ledger_q3").await;
    assert_eq!(seqs(&duck), vec![8_001]);
    assert_eq!(duck.hits[0].snippet.matched, "ledger_q3");

    // Every term must be there.
    assert!(find(&store, "FY2023 流失率").await.hits.is_empty());
    assert!(
        find(&store, "no-such-literal-anywhere")
            .await
            .hits
            .is_empty()
    );
}

/// A batch larger than one statement is indexed in one statement at its end, with the index's
/// trigger off inside its transaction: every row of it is found once, the next single append is
/// indexed by the trigger again, and a batch that fails leaves neither rows nor a switched-off
/// trigger behind.
#[tokio::test]
async fn a_bulk_batch_is_indexed_whole_and_leaves_the_trigger_on() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("bulk", None).await.unwrap();
    store
        .messages()
        .append(
            c.id,
            NewMessage::new(Role::User, "before: quartzite ledger"),
        )
        .await
        .unwrap();
    let batch: Vec<NewMessage> = (0..300)
        .map(|i| NewMessage::new(Role::Assistant, format!("row {i}: obsidian-{i:03} tally")))
        .collect();
    let written = store.messages().append_many(c.id, &batch).await.unwrap();
    assert_eq!(written, 2..302);
    assert_eq!(seqs(&find(&store, "obsidian-257").await), vec![259]);
    assert_eq!(
        find(&store, "obsidian-").await.hits.len(),
        50,
        "a page of many"
    );
    assert_eq!(
        seqs(&find(&store, "quartzite").await),
        vec![1],
        "indexed once"
    );

    store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "after: basalt audit"))
        .await
        .unwrap();
    assert_eq!(seqs(&find(&store, "basalt audit").await), vec![302]);

    // A batch whose last row names an execution that does not exist fails whole.
    let mut failing: Vec<NewMessage> = (0..200)
        .map(|i| NewMessage::new(Role::Assistant, format!("granite-{i:03}")))
        .collect();
    failing[199].execution_id = Some(decima_core::ExecutionId::new());
    assert!(store.messages().append_many(c.id, &failing).await.is_err());
    assert!(find(&store, "granite-").await.hits.is_empty());
    store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "then: marble count"))
        .await
        .unwrap();
    assert_eq!(seqs(&find(&store, "marble count").await), vec![303]);
}

#[tokio::test]
async fn rolled_back_messages_and_deleted_conversations_are_not_found_until_restored() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("rollback", None)
        .await
        .unwrap();
    let msgs = store.messages();
    msgs.append(c.id, NewMessage::new(Role::User, "threshold is 250 EUR"))
        .await
        .unwrap();
    msgs.append(
        c.id,
        NewMessage::new(Role::Assistant, "threshold moved to 400 EUR"),
    )
    .await
    .unwrap();
    assert_eq!(seqs(&find(&store, "threshold").await), vec![2, 1]);

    msgs.soft_delete_after(c.id, 1).await.unwrap();
    assert_eq!(seqs(&find(&store, "threshold").await), vec![1]);
    assert!(find(&store, "400 EUR").await.hits.is_empty());

    store.conversations().soft_delete(c.id).await.unwrap();
    assert!(find(&store, "threshold").await.hits.is_empty());
    store.conversations().restore(c.id).await.unwrap();
    assert_eq!(seqs(&find(&store, "threshold").await), vec![1]);
}

#[tokio::test]
async fn pages_cover_every_hit_once_newest_first_and_a_scope_keeps_to_its_conversation() {
    let (_dir, store) = common::temp_store().await;
    let a = store.conversations().create("a", None).await.unwrap();
    let b = store.conversations().create("b", None).await.unwrap();
    for i in 0..250 {
        let (id, text) = if i % 5 == 0 {
            (b.id, format!("variance note {i}"))
        } else {
            (a.id, format!("variance row {i}"))
        };
        store
            .messages()
            .append(id, NewMessage::new(Role::User, text))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = search(&store, "variance", None, before, 40).await;
        assert!(page.hits.len() <= 40);
        seen.extend(page.hits.iter().map(|h| h.cursor));
        match page.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 250);
    assert!(
        seen.windows(2).all(|w| w[0] > w[1]),
        "newest first, no repeats"
    );

    let scoped = search(&store, "variance", Some(b.id), None, 200).await;
    assert_eq!(scoped.hits.len(), 50);
    assert!(scoped.hits.iter().all(|h| h.conversation_id == b.id));

    let matches = store.search().seqs_in(a.id, "variance", 150).await.unwrap();
    assert_eq!(matches.seqs.len(), 150);
    assert!(matches.truncated);
    assert!(matches.seqs.windows(2).all(|w| w[0] < w[1]), "oldest first");
    let all = store
        .search()
        .seqs_in(a.id, "variance", 1_000)
        .await
        .unwrap();
    assert_eq!(all.seqs, (1..=200).collect::<Vec<_>>());
    assert!(!all.truncated);
}

#[tokio::test]
async fn query_syntax_is_text_to_find_and_an_overlong_query_is_refused() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("hostile", None).await.unwrap();
    let texts = [
        r#"the column is named "net" OR gross"#,
        "NEAR(a b) is not a function here",
        "100% of rows_with_nulls were dropped",
        "a*b and c^d",
    ];
    for t in texts {
        store
            .messages()
            .append(c.id, NewMessage::new(Role::User, t))
            .await
            .unwrap();
    }
    assert_eq!(seqs(&find(&store, r#""net" OR"#).await), vec![1]);
    assert_eq!(seqs(&find(&store, "NEAR(a").await), vec![2]);
    // LIKE's wildcards are literals: "0%" and "s_w" must not match anything else.
    assert_eq!(seqs(&find(&store, "0% s_w").await), vec![3]);
    assert_eq!(seqs(&find(&store, "_").await), vec![3]);
    assert_eq!(seqs(&find(&store, "a*b").await), vec![4]);
    assert_eq!(
        seqs(&find(&store, "'; DROP TABLE messages; --").await),
        Vec::<i64>::new()
    );
    assert!(find(&store, "   ").await.hits.is_empty());

    let long = "x".repeat(decima_store::MAX_QUERY_CHARS + 1);
    let err = store
        .search()
        .messages(&SearchQuery {
            text: &long,
            conversation: None,
            before: None,
            limit: 10,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("at most"), "{err}");
    assert_eq!(store.messages().all(c.id).await.unwrap().len(), 4);
}

#[tokio::test]
async fn a_ten_megabyte_message_is_stored_and_found_by_its_head() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("big", None).await.unwrap();
    let head = "ledger export, first column is invoice_no. ";
    let body = head.to_owned() + &"0123456789abcdef ".repeat(10 * 1024 * 1024 / 17);
    store
        .messages()
        .append(c.id, NewMessage::new(Role::User, body))
        .await
        .unwrap();
    let page = find(&store, "invoice_no").await;
    assert_eq!(seqs(&page), vec![1]);
    assert!(
        page.hits[0].snippet.after.chars().count() < 400,
        "a snippet, not the message"
    );
}

#[tokio::test]
async fn a_history_written_before_the_index_existed_is_found_after_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = common::database_at(&path, 20261201000000).await;
    sqlx::raw_sql(
        "INSERT INTO conversations (id, title, created_at, updated_at) \
         VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'old', 1, 1); \
         INSERT INTO messages (id, conversation_id, seq, role, content, tokens, created_at) \
         VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5b01', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', \
                 1, 'user', 'the old reconciliation of vendor 8812', 7, 2), \
                ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5b02', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', \
                 2, 'assistant', 'vendor 8812 is a duplicate', 6, 3);",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;

    let store = common::open(&path).await;
    assert_eq!(seqs(&find(&store, "vendor 8812").await), vec![2, 1]);
    // And what is written after the upgrade joins it.
    let id: ConversationId = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1".parse().unwrap();
    store
        .messages()
        .append(id, NewMessage::new(Role::User, "vendor 8812 confirmed"))
        .await
        .unwrap();
    let found: BTreeSet<i64> = seqs(&find(&store, "8812").await).into_iter().collect();
    assert_eq!(found, BTreeSet::from([1, 2, 3]));
}
