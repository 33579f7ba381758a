//! A run of merges (`Merger`, as the tenth man's summary merges a long history's blocks) says
//! what merging the blocks one after the other says, on generated analyst sessions with
//! corrections across blocks, in English and Chinese.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::context::{Detail, Digest, Merger, Source};
use decima_testkit::analyst_conversation::Language;
use decima_testkit::fact_sessions::generate;

const BLOCK: usize = 512;

/// The session's blocks, each digested on its own and read back from its text, as the review's
/// cache keeps them.
fn blocks(language: Language) -> Vec<Digest> {
    let session = generate(17, 4_000, language);
    session
        .messages
        .chunks(BLOCK)
        .enumerate()
        .map(|(b, chunk)| {
            let sources = chunk.iter().enumerate().map(|(i, m)| Source {
                role: m.role,
                content: &m.content,
                tool_calls: &m.tool_calls,
                tool_call_id: m.tool_call_id.as_deref(),
                seq: Some((b * BLOCK + i + 1) as i64),
            });
            let digest = if b == 0 {
                Digest::from_sources(sources)
            } else {
                Digest::from_continuation(sources)
            };
            Digest::parse(&digest.render(Detail::Standard))
        })
        .collect()
}

#[test]
fn merging_blocks_in_one_run_says_what_merging_them_one_by_one_says() {
    for language in [Language::English, Language::Chinese] {
        let mut one_by_one = Digest::default();
        let mut merger = Merger::new(Digest::default());
        for block in blocks(language) {
            one_by_one.merge(block.clone());
            merger.push(block);
        }
        let merged = merger.finish();
        assert_eq!(
            merged.render(Detail::Standard),
            one_by_one.render(Detail::Standard),
            "{language:?}"
        );
    }
}
