//! Images of tool results, kept with their message in a real SQLite file.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ImagePart, NewMessage, Role, ToolCall};
use decima_store::{NewExecution, SandboxKind, StepKind, StepNotes, StoreError};

fn image(media_type: &str, data: &str, tokens: u32) -> ImagePart {
    ImagePart {
        media_type: media_type.into(),
        data: data.into(),
        tokens,
    }
}

fn result(call: &str, text: &str, images: Vec<ImagePart>) -> NewMessage {
    let mut m = NewMessage::new(Role::Tool, text);
    m.tool_call_id = Some(call.into());
    m.images = images;
    m
}

fn calling(id: &str) -> NewMessage {
    let mut m = NewMessage::new(Role::Assistant, "");
    m.tool_calls = vec![ToolCall {
        id: id.into(),
        name: "mcp__demo__chart".into(),
        arguments: "{}".into(),
        signature: None,
    }];
    m
}

#[tokio::test]
async fn a_tool_results_images_are_kept_in_order_and_counted_in_its_tokens() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("charts", None)
        .await
        .unwrap()
        .id;
    let msgs = store.messages();
    msgs.append(c, calling("call_1")).await.unwrap();
    let plain = msgs
        .append(c, result("call_1", "[image 1] [image 2]", Vec::new()))
        .await
        .unwrap();
    msgs.append(c, calling("call_2")).await.unwrap();
    let with = msgs
        .append(
            c,
            result(
                "call_2",
                "[image 1] [image 2]",
                vec![
                    image("image/png", "AAAA", 1_500),
                    image("image/jpeg", "BBBB", 0),
                ],
            ),
        )
        .await
        .unwrap();
    // The same text, 1,500 tokens more: what showing the PNG costs.
    assert_eq!(with.tokens, plain.tokens + 1_500);
    assert_eq!(
        msgs.result_images(c, "call_2").await.unwrap(),
        [
            image("image/png", "AAAA", 1_500),
            image("image/jpeg", "BBBB", 0)
        ]
    );
    assert!(msgs.result_images(c, "call_1").await.unwrap().is_empty());
    assert!(
        msgs.result_images(c, "no_such_call")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        msgs.tool_result_images(c).await.unwrap(),
        [(
            "call_2".to_owned(),
            vec![
                image("image/png", "AAAA", 1_500),
                image("image/jpeg", "BBBB", 0)
            ]
        )]
    );
    // The conversation's live token total counts them too.
    let live = store.compactions().live_state(c).await.unwrap();
    let stored: u64 = msgs
        .all(c)
        .await
        .unwrap()
        .iter()
        .map(|m| u64::from(m.tokens))
        .sum();
    assert_eq!(live.tokens, stored);
    assert!(stored > 1_500);
}

#[tokio::test]
async fn images_written_with_step_notes_land_with_the_message_and_go_with_a_rollback() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("charts", None)
        .await
        .unwrap()
        .id;
    let e = store
        .executions()
        .create(&NewExecution {
            conversation_id: c,
            parent_id: None,
            depth: 0,
            task: "chart".into(),
            sandbox: SandboxKind::Host,
            provider_id: None,
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap();
    let msgs = store.messages();
    msgs.append(c, calling("call_1")).await.unwrap();
    let (stored, steps) = msgs
        .append_noting(
            c,
            result("call_1", "chart", vec![image("image/webp", "CCCC", 9)]),
            StepNotes {
                execution: e.id,
                records: &[(StepKind::Supervision, "mcp__demo__chart ok")],
                started_call: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(
        msgs.result_images(c, "call_1").await.unwrap(),
        [image("image/webp", "CCCC", 9)]
    );
    // Rolled back: the message is gone from the history, and its images with it, from what
    // the model is shown and from the window.
    msgs.soft_delete_after(c, stored.seq - 1).await.unwrap();
    assert!(msgs.tool_result_images(c).await.unwrap().is_empty());
    assert!(msgs.result_images(c, "call_1").await.unwrap().is_empty());
}

#[tokio::test]
async fn images_that_are_not_images_or_not_on_a_tool_result_are_refused_and_nothing_is_stored() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("charts", None)
        .await
        .unwrap()
        .id;
    let msgs = store.messages();
    msgs.append(c, calling("call_1")).await.unwrap();
    for bad in [
        image("text/html", "PGI+", 0),
        image(&format!("image/{}", "x".repeat(200)), "AAAA", 0),
        image("image/png", "", 0),
    ] {
        let refused = msgs.append(c, result("call_1", "chart", vec![bad])).await;
        assert!(
            matches!(refused, Err(StoreError::Invalid(ref e)) if e.to_string().contains("image 1")),
            "{refused:?}"
        );
    }
    let mut user = NewMessage::new(Role::User, "look");
    user.images = vec![image("image/png", "AAAA", 0)];
    let refused = msgs.append(c, user).await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(ref e)) if e.to_string().contains("tool messages")),
        "{refused:?}"
    );
    let batch = msgs
        .append_many(
            c,
            &[result(
                "call_1",
                "chart",
                vec![image("image/png", "AAAA", 0)],
            )],
        )
        .await;
    assert!(
        matches!(batch, Err(StoreError::InvalidInput(_))),
        "{batch:?}"
    );
    // Only the first assistant message is there.
    assert_eq!(msgs.all(c).await.unwrap().len(), 1);
}
