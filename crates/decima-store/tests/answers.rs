//! How answers ended and what they cost: recorded per message for chat turns and runs alike,
//! read back in seq order, summed per conversation, replaced when recorded again, and left out
//! once their message is rolled back.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{NewMessage, Role};
use decima_store::{AnswerEnd, AnswerRecord, AnswerTotals, CallUsage};

fn usage(tokens_in: u32, tokens_out: u32, cache_read_tokens: u32) -> Option<CallUsage> {
    Some(CallUsage {
        tokens_in,
        tokens_out,
        cache_read_tokens,
        cache_write_tokens: 0,
    })
}

#[tokio::test]
async fn answers_keep_their_usage_and_how_they_ended_and_sum_per_conversation() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("usage", None).await.unwrap();
    let other = store.conversations().create("other", None).await.unwrap();
    let messages = store.messages();
    messages
        .append(c.id, NewMessage::new(Role::User, "Total revenue?"))
        .await
        .unwrap();
    let first = messages
        .append(c.id, NewMessage::new(Role::Assistant, "It is 4.2M"))
        .await
        .unwrap();
    messages
        .append(c.id, NewMessage::new(Role::User, "And by region?"))
        .await
        .unwrap();
    let second = messages
        .append(c.id, NewMessage::new(Role::Assistant, "North 2.1M, South"))
        .await
        .unwrap();
    let elsewhere = messages
        .append(other.id, NewMessage::new(Role::Assistant, "hello"))
        .await
        .unwrap();
    let answers = store.answers();
    answers
        .record(
            c.id,
            first.id,
            &AnswerRecord {
                usage: usage(1_000, 20, 0),
                cost_microdollars: Some(300),
                ..AnswerRecord::default()
            },
        )
        .await
        .unwrap();
    let cut = AnswerRecord {
        ended: AnswerEnd::Cut,
        usage: usage(1_100, 64, 1_024),
        cost_microdollars: Some(250),
        prompt_truncated: true,
        calls_from_text: Some("hermes".into()),
    };
    answers.record(c.id, second.id, &cut).await.unwrap();
    answers
        .record(
            other.id,
            elsewhere.id,
            &AnswerRecord {
                usage: usage(9, 9, 0),
                cost_microdollars: Some(9),
                ..AnswerRecord::default()
            },
        )
        .await
        .unwrap();

    let read = answers.of_conversation(c.id).await.unwrap();
    assert_eq!(
        read.iter()
            .map(|a| (a.seq, a.message_id))
            .collect::<Vec<_>>(),
        [(first.seq, first.id), (second.seq, second.id)]
    );
    assert_eq!(read[0].record.ended, AnswerEnd::Complete);
    assert_eq!(read[1].record, cut);
    assert_eq!(
        answers.chat_totals(c.id).await.unwrap(),
        AnswerTotals {
            answers: 2,
            tokens_in: 2_100,
            tokens_out: 84,
            cache_read_tokens: 1_024,
            cache_write_tokens: 0,
            cost_microdollars: Some(550),
        }
    );

    // Recorded again (a stopped answer that was continued): one record, the newer one.
    answers
        .record(
            c.id,
            second.id,
            &AnswerRecord {
                ended: AnswerEnd::Stopped,
                ..AnswerRecord::default()
            },
        )
        .await
        .unwrap();
    let read = answers.of_conversation(c.id).await.unwrap();
    assert_eq!(read.len(), 2);
    assert_eq!(read[1].record.ended, AnswerEnd::Stopped);
    assert_eq!(read[1].record.usage, None);

    // A rolled-back answer no longer counts.
    messages.soft_delete_after(c.id, first.seq).await.unwrap();
    let totals = answers.chat_totals(c.id).await.unwrap();
    assert_eq!((totals.answers, totals.tokens_in), (1, 1_000));
    assert_eq!(totals.cost_microdollars, Some(300));
}

#[tokio::test]
async fn a_conversation_without_priced_answers_has_no_cost_rather_than_a_free_one() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("unpriced", None)
        .await
        .unwrap();
    assert_eq!(
        store.answers().chat_totals(c.id).await.unwrap(),
        AnswerTotals::default()
    );
    let answer = store
        .messages()
        .append(c.id, NewMessage::new(Role::Assistant, "local model"))
        .await
        .unwrap();
    store
        .answers()
        .record(
            c.id,
            answer.id,
            &AnswerRecord {
                usage: usage(500, 10, 400),
                ..AnswerRecord::default()
            },
        )
        .await
        .unwrap();
    let totals = store.answers().chat_totals(c.id).await.unwrap();
    assert_eq!((totals.tokens_in, totals.cache_read_tokens), (500, 400));
    assert_eq!(totals.cost_microdollars, None);
}
