//! The tenth man's cached summaries and a review's passes, on a real SQLite file: rows are found
//! by range, checked by the live fingerprint of their range (a rollback changes it and also
//! deletes the rows it touches), renderings are capped per conversation, rows of another
//! format are replaced, and the passes of a review survive a round trip.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ConversationId, NewMessage, Role};
use decima_store::{NewReview, ReviewDigest, ReviewPass, SeqFingerprint, Store};

async fn conversation_of(store: &Store, n: usize) -> ConversationId {
    let c = store.conversations().create("digests", None).await.unwrap();
    let drafts: Vec<NewMessage> = (0..n)
        .map(|i| NewMessage::new(Role::User, format!("message {i} about ticket DATA-{i}")))
        .collect();
    store.messages().append_many(c.id, &drafts).await.unwrap();
    c.id
}

fn digest(from: i64, through: i64, budget: u32, fingerprint: SeqFingerprint) -> ReviewDigest {
    ReviewDigest {
        from_seq: from,
        through_seq: through,
        budget,
        fingerprint,
        text: format!("## Literals\n- DATA-{from}\n"),
        tokens: 7,
    }
}

#[tokio::test]
async fn digests_are_found_by_range_and_checked_by_the_live_fingerprint() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation_of(&store, 50).await;
    let digests = store.review_digests();
    let prints = digests
        .fingerprints(c, &[(1, 20), (21, 40), (45, 60), (70, 80)])
        .await
        .unwrap();
    assert_eq!(prints[0].messages, 20);
    assert_eq!(prints[0].seq_sum, (1..=20).sum::<i64>());
    assert_eq!(prints[2].messages, 6, "only the live seqs 45-50 count");
    assert_eq!(prints[3], SeqFingerprint::default());
    let all = store.messages().all(c).await.unwrap();
    let tokens: u64 = all[..20].iter().map(|m| u64::from(m.tokens)).sum();
    assert_eq!(prints[0].tokens, tokens);

    digests
        .put(
            c,
            1,
            &[
                digest(1, 20, 0, prints[0]),
                digest(21, 40, 0, prints[1]),
                digest(1, 40, 900, prints[0]),
            ],
            &[],
        )
        .await
        .unwrap();
    let blocks = digests.within(c, 1, 1, 40, 0).await.unwrap();
    assert_eq!(
        blocks
            .iter()
            .map(|d| (d.from_seq, d.through_seq))
            .collect::<Vec<_>>(),
        vec![(1, 20), (21, 40)]
    );
    assert_eq!(blocks[0].fingerprint, prints[0]);
    assert_eq!(digests.within(c, 1, 1, 40, 900).await.unwrap().len(), 1);
    assert!(digests.within(c, 1, 2, 40, 0).await.unwrap().len() == 1);
    // Another format's rows are never read, and go when that format writes.
    assert!(digests.within(c, 2, 1, 40, 0).await.unwrap().is_empty());
    // A stale row is replaced by the larger one that extends it.
    digests
        .put(c, 1, &[digest(21, 45, 0, prints[1])], &[(21, 40, 0)])
        .await
        .unwrap();
    let blocks = digests.within(c, 1, 21, 50, 0).await.unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].through_seq, 45);

    // A rollback after seq 30 changes the fingerprint of every range past it, and deletes the
    // rows that reach past it; the rows before it stay, and still match.
    store.messages().soft_delete_after(c, 30).await.unwrap();
    let after = digests.fingerprints(c, &[(1, 20), (21, 40)]).await.unwrap();
    assert_eq!(after[0], prints[0]);
    assert_ne!(after[1], prints[1]);
    assert_eq!(after[1].messages, 10);
    let left = digests.within(c, 1, 1, 100, 0).await.unwrap();
    assert_eq!(
        left.iter()
            .map(|d| (d.from_seq, d.through_seq))
            .collect::<Vec<_>>(),
        vec![(1, 20)]
    );
    assert!(digests.within(c, 1, 1, 100, 900).await.unwrap().is_empty());
    // A newer format replaces the older rows as soon as it writes.
    digests
        .put(c, 2, &[digest(1, 20, 0, after[0])], &[])
        .await
        .unwrap();
    assert!(digests.within(c, 1, 1, 100, 0).await.unwrap().is_empty());
    assert_eq!(digests.count(c).await.unwrap(), 1);
}

#[tokio::test]
async fn renderings_are_capped_per_conversation_and_blocks_are_not() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation_of(&store, 5).await;
    let digests = store.review_digests();
    let print = SeqFingerprint::default();
    for i in 0..40 {
        digests
            .put(
                c,
                1,
                &[digest(i + 1, i + 1, 0, print), digest(1, i + 1, 500, print)],
                &[],
            )
            .await
            .unwrap();
    }
    assert_eq!(digests.within(c, 1, 1, 100, 0).await.unwrap().len(), 40);
    let rendered = digests.within(c, 1, 1, 100, 500).await.unwrap();
    assert_eq!(rendered.len(), 16);
    // The newest are kept.
    assert!(rendered.iter().any(|d| d.through_seq == 40));
    assert!(!rendered.iter().any(|d| d.through_seq == 1));
}

#[tokio::test]
async fn a_review_keeps_its_passes() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation_of(&store, 12).await;
    let passes = vec![
        ReviewPass {
            pass: 1,
            from_seq: 1,
            through_seq: 6,
            summarised: Some((1, 3)),
            verbatim: Some((4, 6)),
            input_tokens: 900,
            risk_level: "low".parse().unwrap(),
            findings: 1,
        },
        ReviewPass {
            pass: 2,
            from_seq: 7,
            through_seq: 12,
            summarised: None,
            verbatim: Some((7, 12)),
            input_tokens: 950,
            risk_level: "high".parse().unwrap(),
            findings: 2,
        },
    ];
    let review = store
        .reviews()
        .insert(&NewReview {
            conversation_id: c,
            execution_id: None,
            mode: "full_history".into(),
            mode_argument: None,
            review_type: "full".into(),
            focus: None,
            trigger: "user".into(),
            risk_level: "high".parse().unwrap(),
            summary: "Two passes.".into(),
            findings: vec![],
            open_questions: vec![],
            closes: vec![],
            reviewed_from_seq: 0,
            reviewed_through_seq: 12,
            language: None,
            provider: None,
            model: None,
            input_tokens: 1_850,
            passes: passes.clone(),
            cache_key: "k".into(),
        })
        .await
        .unwrap();
    assert_eq!(review.passes, passes);
    assert_eq!(
        store.reviews().get(&review.id).await.unwrap().passes,
        passes
    );
    // A review row written before passes were recorded reads as none.
    common::execute(
        &store,
        "UPDATE reviews SET passes = '[]' WHERE id = $1",
        &[&review.id],
    )
    .await;
    assert!(
        store
            .reviews()
            .get(&review.id)
            .await
            .unwrap()
            .passes
            .is_empty()
    );
}
