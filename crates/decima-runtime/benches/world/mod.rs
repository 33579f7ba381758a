//! The world the runtime's end-to-end benches share: a store file with one provider pointing
//! at the wire-level test server, and the 10k-message conversation, compacted once as a long
//! run's history is.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;

use decima_core::context::{CompressionLevel, Strategy};
use decima_core::prompt::Preset;
use decima_runtime::NoEvents;
use decima_runtime::compression::{CompressContext, CompressRequest, compress};
use decima_runtime::context::Scale;
use decima_runtime::settings::WindowSettings;
use decima_store::{Conversation, NewProvider, Store};
use decima_testkit::ConversationBuilder;

/// A store in `dir` with the provider `local` (model `qwen3`, `window` tokens) at `base_url`.
pub async fn store_with_provider(dir: &Path, base_url: String, window: u32) -> Store {
    let store = Store::open(&dir.join("bench.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap();
    store
        .providers()
        .create(NewProvider {
            name: "local".into(),
            kind: "openai".into(),
            preset: None,
            base_url,
            model: "qwen3".into(),
            context_window: window,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    store
}

/// The 10,000 generated messages (160 characters of prose each), imported as `title`.
pub async fn import_10k(store: &Store, title: &str) -> Conversation {
    let built = ConversationBuilder::new(7, 10_000)
        .content_chars(160)
        .build();
    store
        .conversations()
        .import(title, None, &built.messages)
        .await
        .unwrap()
}

/// Compacts the conversation once at the standard level for `window`, with `extract`.
pub async fn compact(store: &Store, dir: &Path, conversation: &Conversation, window: u32) {
    compress(
        &CompressContext {
            store,
            data_dir: dir,
            conversation,
            preset: &Preset::default(),
            window: &WindowSettings::new(window),
            scale: Scale::ONE,
            provider: None,
            events: &NoEvents,
        },
        CompressRequest {
            level: Some(CompressionLevel::Standard),
            strategy: Strategy::Extract,
            dry_run: false,
            written: None,
        },
    )
    .await
    .unwrap();
}
