//! The workbench preferences against a real SQLite file: saved, read back, checked against the
//! configured providers, and clear about a choice that no longer holds.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_runtime::RuntimeError;
use decima_runtime::preferences::{self, Preferences};
use decima_store::{NewProvider, SandboxKind, Store};

async fn store_with(names: &[&str]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("decima.db"),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    for name in names {
        store
            .providers()
            .create(NewProvider {
                name: (*name).into(),
                kind: "openai".into(),
                preset: None,
                base_url: "http://127.0.0.1:9".into(),
                model: "m".into(),
                context_window: 32_000,
                settings: serde_json::json!({}),
            })
            .await
            .unwrap();
    }
    (dir, store)
}

#[tokio::test]
async fn nothing_saved_is_the_defaults() {
    let (_dir, store) = store_with(&[]).await;
    let loaded = preferences::load(&store).await.unwrap();
    assert_eq!(loaded, Preferences::default());
    assert_eq!(loaded.sandbox, SandboxKind::Host);
    assert_eq!(loaded.provider_in_force(&store).await.unwrap(), None);
}

#[tokio::test]
async fn with_several_providers_and_no_choice_the_error_says_where_to_choose() {
    let (_dir, store) = store_with(&["fast"]).await;
    let none = Preferences::default();
    assert_eq!(
        none.provider_in_force(&store).await.unwrap(),
        None,
        "the only one"
    );
    let (_dir, store) = store_with(&["fast", "careful"]).await;
    let err = none.provider_in_force(&store).await.unwrap_err();
    assert!(
        matches!(&err, RuntimeError::Config(m) if m.contains("Settings")),
        "{err:?}"
    );
}

#[tokio::test]
async fn saved_choices_come_back_and_blank_names_mean_no_choice() {
    let (_dir, store) = store_with(&["fast", "careful"]).await;
    let saved = preferences::save(
        &store,
        Preferences {
            provider: Some(" fast ".into()),
            reviewer_provider: Some("careful".into()),
            sandbox: SandboxKind::Docker,
        },
    )
    .await
    .unwrap();
    assert_eq!(saved.provider.as_deref(), Some("fast"));
    let loaded = preferences::load(&store).await.unwrap();
    assert_eq!(loaded, saved);
    assert_eq!(
        loaded.reviewer_in_force(&store).await.unwrap().as_deref(),
        Some("careful")
    );

    let cleared = preferences::save(
        &store,
        Preferences {
            provider: Some("   ".into()),
            reviewer_provider: Some(String::new()),
            sandbox: SandboxKind::Host,
        },
    )
    .await
    .unwrap();
    assert_eq!(cleared, Preferences::default());
    assert_eq!(
        preferences::load(&store).await.unwrap(),
        Preferences::default()
    );
}

#[tokio::test]
async fn an_unknown_provider_is_refused_and_nothing_changes() {
    let (_dir, store) = store_with(&["fast"]).await;
    let first = Preferences {
        provider: Some("fast".into()),
        ..Preferences::default()
    };
    preferences::save(&store, first.clone()).await.unwrap();
    for bad in ["slow", "../../etc/passwd", "fast\u{0}"] {
        let err = preferences::save(
            &store,
            Preferences {
                reviewer_provider: Some(bad.into()),
                ..first.clone()
            },
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, RuntimeError::Config(_) | RuntimeError::Store(_)),
            "{bad:?}: {err:?}"
        );
    }
    assert_eq!(preferences::load(&store).await.unwrap(), first);
}

#[tokio::test]
async fn a_provider_removed_after_it_was_chosen_is_named_in_the_error() {
    let (dir, store) = store_with(&["fast"]).await;
    preferences::save(
        &store,
        Preferences {
            provider: Some("fast".into()),
            ..Preferences::default()
        },
    )
    .await
    .unwrap();
    decima_runtime::providers::remove(&store, dir.path(), "fast")
        .await
        .unwrap();
    let err = preferences::load(&store)
        .await
        .unwrap()
        .provider_in_force(&store)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("'fast'") && text.contains("Settings"),
        "{text}"
    );
}

#[tokio::test]
async fn unreadable_saved_settings_are_an_error_that_says_what_to_do() {
    let (_dir, store) = store_with(&[]).await;
    store
        .app_settings()
        .put("workbench", &serde_json::json!({"sandbox": "kubernetes"}))
        .await
        .unwrap();
    let err = preferences::load(&store).await.unwrap_err();
    assert!(
        matches!(&err, RuntimeError::Config(m) if m.contains("save them again")),
        "{err:?}"
    );
}

#[tokio::test]
async fn thresholds_are_checked_then_kept_with_the_provider_and_read_by_the_window() {
    use decima_core::context::Thresholds;
    use decima_runtime::providers::set_thresholds;
    use decima_runtime::settings::window_settings;

    let (_dir, store) = store_with(&["fast"]).await;
    let default = window_settings(&store, Some("fast")).await.unwrap();
    assert_eq!(default.thresholds, Thresholds::default());

    for bad in [
        Thresholds {
            warn: 0.9,
            compress: 0.8,
            deep: 0.95,
            enabled: true,
        },
        Thresholds {
            warn: 0.5,
            compress: 0.6,
            deep: 1.2,
            enabled: true,
        },
        Thresholds {
            warn: f64::NAN,
            compress: 0.6,
            deep: 0.7,
            enabled: true,
        },
        Thresholds {
            warn: 0.0,
            compress: 0.6,
            deep: 0.7,
            enabled: true,
        },
    ] {
        assert!(
            set_thresholds(&store, "fast", bad).await.is_err(),
            "{bad:?}"
        );
    }
    assert_eq!(
        window_settings(&store, Some("fast"))
            .await
            .unwrap()
            .thresholds,
        Thresholds::default(),
        "a refused setting changes nothing"
    );

    let chosen = Thresholds {
        warn: 0.6,
        compress: 0.75,
        deep: 0.8,
        enabled: false,
    };
    set_thresholds(&store, "fast", chosen).await.unwrap();
    assert_eq!(
        window_settings(&store, Some("fast"))
            .await
            .unwrap()
            .thresholds,
        chosen
    );
    assert!(set_thresholds(&store, "gone", chosen).await.is_err());
}

/// A conversation's own run options: unset ones follow the settings, set ones win, and a
/// choice a run could not start with is refused when saved and when it stopped holding.
#[tokio::test]
async fn a_conversations_run_options_win_over_the_settings_and_are_checked() {
    use decima_runtime::conversation_options::{
        self as options, ConversationOptions, MAX_STEPS_LIMIT,
    };
    use decima_runtime::review::TenthManMode;
    let (_dir, store) = store_with(&["local", "careful"]).await;
    let c = store.conversations().create("q3", None).await.unwrap();
    let other = store.conversations().create("q4", None).await.unwrap();
    let settings = Preferences {
        provider: Some("local".into()),
        reviewer_provider: None,
        sandbox: SandboxKind::Host,
    };

    let unset = options::load(&store, c.id).await.unwrap();
    assert_eq!(unset, ConversationOptions::default());
    let follows = unset.in_force(&store, &settings).await.unwrap();
    assert_eq!(follows.provider.as_deref(), Some("local"));
    assert_eq!(follows.sandbox, SandboxKind::Host);
    assert_eq!((follows.max_steps, follows.tenth_man), (None, None));

    let saved = options::save(
        &store,
        c.id,
        ConversationOptions {
            provider: Some(" careful ".into()),
            sandbox: Some("docker".into()),
            max_steps: Some(120),
            tenth_man: Some(TenthManMode::Off),
            workspace: None,
            quick: true,
        },
    )
    .await
    .unwrap();
    assert_eq!(saved.provider.as_deref(), Some("careful"));
    let own = options::load(&store, c.id).await.unwrap();
    assert_eq!(own, saved);
    let wins = own.in_force(&store, &settings).await.unwrap();
    assert_eq!(wins.provider.as_deref(), Some("careful"));
    assert_eq!(wins.sandbox, SandboxKind::Docker);
    assert_eq!(wins.max_steps, Some(120));
    assert!(wins.quick, "a quick chat is remembered per conversation");
    assert_eq!(wins.tenth_man, Some(TenthManMode::Off));
    // Another conversation is untouched.
    assert_eq!(
        options::load(&store, other.id).await.unwrap(),
        ConversationOptions::default()
    );

    for bad in [
        ConversationOptions {
            provider: Some("gone".into()),
            ..ConversationOptions::default()
        },
        ConversationOptions {
            sandbox: Some("vm".into()),
            ..ConversationOptions::default()
        },
        ConversationOptions {
            max_steps: Some(0),
            ..ConversationOptions::default()
        },
        ConversationOptions {
            max_steps: Some(MAX_STEPS_LIMIT + 1),
            ..ConversationOptions::default()
        },
    ] {
        let err = options::save(&store, c.id, bad.clone()).await.unwrap_err();
        assert!(matches!(err, RuntimeError::Config(_)), "{bad:?}: {err}");
    }
    assert_eq!(
        options::load(&store, c.id).await.unwrap(),
        saved,
        "a refusal keeps what was saved"
    );

    // The chosen provider is removed: the next run is refused with a reason, not switched.
    store.providers().remove("careful").await.unwrap();
    let err = own.in_force(&store, &settings).await.unwrap_err();
    assert!(err.to_string().contains("careful"), "{err}");
}

/// A conversation's workspace folder must be a folder on this computer, given as a full path.
#[tokio::test]
async fn a_conversations_workspace_is_an_existing_absolute_folder() {
    use decima_runtime::conversation_options::{self as options, ConversationOptions};
    let (dir, store) = store_with(&["local"]).await;
    let c = store.conversations().create("q3", None).await.unwrap();
    let settings = Preferences::default();
    let folder = dir.path().join("analyst-q3");
    std::fs::create_dir(&folder).unwrap();
    let saved = options::save(
        &store,
        c.id,
        ConversationOptions {
            workspace: Some(folder.display().to_string()),
            ..ConversationOptions::default()
        },
    )
    .await
    .unwrap();
    let in_force = saved.in_force(&store, &settings).await.unwrap();
    assert_eq!(in_force.workspace.as_deref(), Some(folder.as_path()));
    for bad in ["relative/folder", "/no/such/folder/anywhere"] {
        let err = options::save(
            &store,
            c.id,
            ConversationOptions {
                workspace: Some(bad.into()),
                ..ConversationOptions::default()
            },
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("not a folder"), "{bad}: {err}");
    }
    // The folder is removed after it was chosen: the next run is refused, not sent elsewhere.
    std::fs::remove_dir(&folder).unwrap();
    assert!(saved.in_force(&store, &settings).await.is_err());
}
