//! Providers and token calibrations against a real SQLite file built from `migrations/`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_store::{NewProvider, StoreError};
use serde_json::json;

fn deepseek(name: &str) -> NewProvider {
    NewProvider {
        name: name.to_string(),
        kind: "openai".into(),
        preset: Some("deepseek".into()),
        base_url: "https://api.deepseek.com/v1/".into(),
        model: "deepseek-chat".into(),
        context_window: 128_000,
        settings: json!({"warn_at": 0.7}),
    }
}

#[tokio::test]
async fn create_list_get_update_remove() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.providers();
    assert!(repo.list().await.unwrap().is_empty());

    let made = repo.create(deepseek("deepseek")).await.unwrap();
    assert_eq!(made.name, "deepseek");
    assert_eq!(made.kind, "openai");
    assert_eq!(made.preset.as_deref(), Some("deepseek"));
    assert_eq!(
        made.base_url, "https://api.deepseek.com/v1",
        "trailing slash trimmed"
    );
    assert_eq!(made.context_window, 128_000);
    assert_eq!(made.settings, json!({"warn_at": 0.7}));
    assert_eq!(made.id.len(), 36);
    assert_eq!(made.id.as_bytes()[14], b'7', "a UUIDv7: {}", made.id);

    let claude = repo
        .create(NewProvider {
            name: "claude".into(),
            kind: "anthropic".into(),
            preset: None,
            base_url: "https://api.anthropic.com".into(),
            model: "claude-sonnet-4-5".into(),
            context_window: 200_000,
            settings: serde_json::Value::Null,
        })
        .await
        .unwrap();
    assert_eq!(claude.settings, json!({}));

    let fetched = repo.get_by_name("deepseek").await.unwrap();
    assert_eq!(fetched, made, "what create returns is what is stored");
    let names: Vec<String> = repo
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["claude", "deepseek"]);

    let updated = repo
        .update_settings(
            "deepseek",
            json!({"warn_at": 0.6, "headers": {"X-Trace": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(updated.settings["warn_at"], json!(0.6));
    assert!(updated.updated_at >= made.updated_at);
    assert_eq!(updated.created_at, made.created_at);
    assert_eq!(repo.get_by_name("deepseek").await.unwrap(), updated);

    repo.remove("deepseek").await.unwrap();
    assert!(matches!(
        repo.get_by_name("deepseek").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        repo.remove("deepseek").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        repo.update_settings("deepseek", json!({})).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        repo.remove("never-existed").await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(repo.list().await.unwrap().len(), 1);

    let kept: i64 = common::scalar(
        &store,
        "SELECT COUNT(*) FROM providers WHERE name = 'deepseek' AND deleted_at IS NOT NULL",
        &[],
    )
    .await;
    assert_eq!(kept, 1, "removal is a soft delete");
}

#[tokio::test]
async fn duplicate_names_are_refused_until_the_first_is_removed() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.providers();
    let first = repo.create(deepseek("main")).await.unwrap();
    let err = repo.create(deepseek("main")).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput(_)), "{err:?}");
    assert_eq!(err.to_string(), "a provider named main already exists");

    repo.remove("main").await.unwrap();
    let second = repo.create(deepseek("main")).await.unwrap();
    assert_ne!(first.id, second.id);
    assert_eq!(repo.get_by_name("main").await.unwrap().id, second.id);
    assert!(matches!(
        repo.create(deepseek("main")).await,
        Err(StoreError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn hostile_names_and_bad_fields_are_refused() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.providers();
    let long = "p".repeat(65);
    for bad in [
        "",
        "../etc/passwd",
        "a/b",
        "a\\b",
        "with space",
        "line\nbreak",
        "nul\0",
        "x'; DROP TABLE providers; --",
        "名前",
        "..",
        long.as_str(),
    ] {
        let err = repo.create(deepseek(bad)).await.unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidInput(_)),
            "{bad:?}: {err:?}"
        );
        assert!(!err.to_string().contains('\n'), "{err}");
        assert!(matches!(
            repo.get_by_name(bad).await,
            Err(StoreError::InvalidInput(_))
        ));
        assert!(matches!(
            repo.remove(bad).await,
            Err(StoreError::InvalidInput(_))
        ));
    }
    repo.create(deepseek(&"p".repeat(64))).await.unwrap();

    let invalid = |f: fn(&mut NewProvider)| {
        let mut p = deepseek("ok");
        f(&mut p);
        p
    };
    let bad_inputs = [
        invalid(|p| p.kind = "gemini".into()),
        invalid(|p| p.base_url = String::new()),
        invalid(|p| p.base_url = "api.openai.com/v1".into()),
        invalid(|p| p.base_url = "file:///etc/passwd".into()),
        invalid(|p| p.base_url = "https://me:sk-123@api.x.com/v1".into()),
        invalid(|p| p.context_window = 0),
        invalid(|p| p.model = "  ".into()),
        invalid(|p| p.preset = Some("../x".into())),
        invalid(|p| p.settings = json!(["not", "an", "object"])),
        invalid(|p| p.settings = json!({"api_key": "sk-123"})),
        invalid(|p| p.settings = json!({"headers": {"Authorization": "Bearer sk-123"}})),
    ];
    for input in bad_inputs {
        let err = repo.create(input.clone()).await.unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidInput(_)),
            "{input:?}: {err:?}"
        );
        assert!(!err.to_string().contains("sk-123"), "{err}");
    }
    assert!(matches!(
        repo.update_settings(&"p".repeat(64), json!({"secret": "x"}))
            .await,
        Err(StoreError::InvalidInput(_))
    ));
    assert_eq!(repo.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn calibrations_upsert() {
    let (_dir, store) = common::temp_store().await;
    let cal = store.calibrations();
    assert_eq!(cal.get("deepseek-chat").await.unwrap(), None);

    cal.save("deepseek-chat", 0.82, 3).await.unwrap();
    assert_eq!(cal.get("deepseek-chat").await.unwrap(), Some((0.82, 3)));

    cal.save("deepseek-chat", 0.79, 4).await.unwrap();
    assert_eq!(cal.get("deepseek-chat").await.unwrap(), Some((0.79, 4)));

    cal.save("claude-sonnet-4-5", 1.1, 1).await.unwrap();
    assert_eq!(cal.get("deepseek-chat").await.unwrap(), Some((0.79, 4)));
    assert_eq!(cal.get("claude-sonnet-4-5").await.unwrap(), Some((1.1, 1)));

    let rows: i64 = common::scalar(&store, "SELECT COUNT(*) FROM token_calibrations", &[]).await;
    assert_eq!(rows, 2);

    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(
            matches!(
                cal.save("deepseek-chat", bad, 5).await,
                Err(StoreError::InvalidInput(_))
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        cal.save("", 1.0, 1).await,
        Err(StoreError::InvalidInput(_))
    ));
    assert!(matches!(
        cal.get("mo\ndel").await,
        Err(StoreError::InvalidInput(_))
    ));
    assert_eq!(cal.get("deepseek-chat").await.unwrap(), Some((0.79, 4)));
}

#[tokio::test]
async fn app_settings_keep_objects_replace_them_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let store = common::open(&path).await;
    let settings = store.app_settings();
    assert_eq!(settings.get("workbench").await.unwrap(), None);

    settings
        .put(
            "workbench",
            &json!({"provider": "deepseek", "sandbox": "host"}),
        )
        .await
        .unwrap();
    settings
        .put(
            "workbench",
            &json!({"provider": "claude", "sandbox": "docker"}),
        )
        .await
        .unwrap();
    store.close().await;

    let store = common::open(&path).await;
    assert_eq!(
        store.app_settings().get("workbench").await.unwrap(),
        Some(json!({"provider": "claude", "sandbox": "docker"}))
    );
}

#[tokio::test]
async fn app_settings_refuse_secrets_odd_keys_and_non_objects_and_keep_what_was_there() {
    let (_dir, store) = common::temp_store().await;
    let settings = store.app_settings();
    settings
        .put("workbench", &json!({"provider": "deepseek"}))
        .await
        .unwrap();

    for (key, value) in [
        (
            "workbench",
            json!({"provider": "x", "nested": {"Api-Key": "sk-live"}}),
        ),
        ("workbench", json!({"client_secret": "s"})),
        ("workbench", json!(["provider"])),
        ("workbench", json!("deepseek")),
        ("", json!({})),
        ("Workbench", json!({})),
        ("../etc", json!({})),
        (&"k".repeat(65), json!({})),
        ("workbench", json!({"notes": "x".repeat(70_000)})),
    ] {
        let err = settings.put(key, &value).await.unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidInput(_)),
            "{key:?} {value}: {err:?}"
        );
    }
    assert!(matches!(
        settings.get("DROP TABLE").await.unwrap_err(),
        StoreError::InvalidInput(_)
    ));
    assert_eq!(
        settings.get("workbench").await.unwrap(),
        Some(json!({"provider": "deepseek"})),
        "a refused write changes nothing"
    );
}

#[tokio::test]
async fn an_edited_endpoint_is_checked_like_a_new_one_and_kept() {
    let (_dir, store) = common::temp_store().await;
    store.providers().create(deepseek("ds")).await.unwrap();
    let edited = store
        .providers()
        .update_endpoint("ds", " http://gpu-box:8000/v1 ", " qwen3-32b ", 65_536)
        .await
        .unwrap();
    assert_eq!(
        (
            edited.base_url.as_str(),
            edited.model.as_str(),
            edited.context_window
        ),
        ("http://gpu-box:8000/v1", "qwen3-32b", 65_536)
    );
    let read = store.providers().get_by_name("ds").await.unwrap();
    assert_eq!(read.model, "qwen3-32b");
    for (url, model, window) in [
        ("gpu-box:8000", "m", 1),
        ("http://x/v1", "  ", 1),
        ("http://x/v1", "m", 0),
    ] {
        assert!(
            store
                .providers()
                .update_endpoint("ds", url, model, window)
                .await
                .is_err(),
            "{url} {model} {window}"
        );
    }
    assert!(
        store
            .providers()
            .update_endpoint("missing", "http://x/v1", "m", 1)
            .await
            .is_err()
    );
    assert_eq!(
        store.providers().get_by_name("ds").await.unwrap().model,
        "qwen3-32b",
        "a refused edit changes nothing"
    );
}
