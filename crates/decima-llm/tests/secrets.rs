//! The secret store's file backend on a real filesystem, and the keyring fallback on this machine.
//! The file is its owner's alone: mode 0600 on unix, a protected DACL of the user alone on
//! Windows (read back through `acl`).
// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(windows)]
mod acl;

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use decima_llm::LlmError;
use decima_llm::secrets::{
    ApiKey, BackendChoice, SECRETS_FILE, SecretBackend, SecretStore, SecretString,
};

fn file_store(dir: &Path) -> SecretStore {
    let (store, warning) = SecretStore::open_with(dir, BackendChoice::File).unwrap();
    assert!(warning.is_none(), "a chosen file backend is not a surprise");
    store
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Checks that the secrets file at `path` is its owner's alone, as the platform says it.
#[cfg(unix)]
fn assert_owner_only(path: &Path) {
    assert_eq!(mode(path), 0o600);
}

/// Checks that the secrets file at `path` is its owner's alone, as the platform says it.
#[cfg(windows)]
fn assert_owner_only(path: &Path) {
    acl::assert_private(path, "");
}

#[test]
fn file_backend_round_trips_overwrites_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    let path = dir.path().join(SECRETS_FILE);
    assert_eq!(store.backend(), SecretBackend::File(path.clone()));
    assert!(store.get("openai").unwrap().is_none());
    assert!(!path.exists(), "reading creates nothing");

    store.set("openai", &ApiKey::new("sk-first\n")).unwrap();
    store.set("deepseek", &"sk-deep".into()).unwrap();
    assert_eq!(store.get("openai").unwrap().unwrap().expose(), "sk-first");

    store.set("openai", &"sk-second".into()).unwrap();
    assert_eq!(store.get("openai").unwrap().unwrap().expose(), "sk-second");
    assert_eq!(store.get("deepseek").unwrap().unwrap().expose(), "sk-deep");

    // A second handle (another process, in real life) sees the same keys.
    let other = file_store(dir.path());
    assert_eq!(other.get("openai").unwrap().unwrap().expose(), "sk-second");

    assert!(store.delete("openai").unwrap());
    assert!(
        !store.delete("openai").unwrap(),
        "deleting twice is not an error"
    );
    assert!(store.get("openai").unwrap().is_none());
    assert_eq!(store.get("deepseek").unwrap().unwrap().expose(), "sk-deep");
    assert!(!store.delete("never-set").unwrap());
}

#[cfg(unix)]
#[test]
fn the_file_is_0600_and_no_temp_files_remain() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fresh").join("decima");
    let store = file_store(&data);
    store.set("openai", &"sk-private".into()).unwrap();
    let path = data.join(SECRETS_FILE);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        mode(&data),
        0o700,
        "a data directory created here is private"
    );
    store.set("openai", &"sk-private-2".into()).unwrap();
    assert_eq!(mode(&path), 0o600, "rewrites keep the mode");
    for entry in std::fs::read_dir(&data).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "leftover temp file {name}");
        assert_eq!(mode(&entry.path()) & 0o077, 0, "{name} is private");
    }
}

#[cfg(unix)]
#[test]
fn a_loosened_file_is_made_private_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    store.set("openai", &"sk-x".into()).unwrap();
    let path = dir.path().join(SECRETS_FILE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(store.get("openai").unwrap().unwrap().expose(), "sk-x");
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn keys_never_print() {
    let key = SecretString::new("sk-live-abcdef123456");
    assert_eq!(format!("{key}"), "***");
    assert_eq!(format!("{key:?}"), "***");
    assert_eq!(format!("{:?}", Some(key.clone())), "Some(***)");
    assert_eq!(key.expose(), "sk-live-abcdef123456");

    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    store.set("openai", &key).unwrap();
    let debug = format!("{store:?}");
    assert!(!debug.contains("sk-live"), "{debug}");
}

#[test]
fn bad_keys_are_refused_without_being_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    for bad in ["", "   \n", "sk-half one", "sk-line\nbreak", "sk-\u{7}bell"] {
        let err = store.set("openai", &bad.into()).unwrap_err();
        assert!(matches!(err, LlmError::InvalidKey(_)), "{bad:?}: {err:?}");
        let text = format!("{err} {err:?}");
        assert!(!text.contains("sk-"), "{text}");
    }
    let huge = SecretString::new("k".repeat(20_000));
    assert!(matches!(
        store.set("openai", &huge),
        Err(LlmError::InvalidKey(_))
    ));
    assert!(!dir.path().join(SECRETS_FILE).exists());
}

#[test]
fn hostile_provider_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    let long = "a".repeat(65);
    for bad in [
        "",
        "../../etc/passwd",
        "a/b",
        "a\\b",
        "open ai",
        "name\n",
        "tab\t",
        "nul\0",
        "ключ",
        ".",
        "..",
        long.as_str(),
    ] {
        for err in [
            store.get(bad).unwrap_err(),
            store.set(bad, &"sk-x".into()).unwrap_err(),
            store.delete(bad).unwrap_err(),
        ] {
            assert!(
                matches!(err, LlmError::InvalidProviderName { .. }),
                "{bad:?}"
            );
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }
    for good in ["openai", "my-provider_2.local", &"a".repeat(64)] {
        store.set(good, &"sk-ok".into()).unwrap();
        assert!(store.get(good).unwrap().is_some());
    }
    assert!(!dir.path().join("etc").exists());
}

#[test]
fn a_corrupt_file_gives_a_clear_error_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SECRETS_FILE);
    let store = file_store(dir.path());
    for garbage in [
        "{\"version\": 1, \"keys\": {\"openai\": \"sk-precious\"".to_string(),
        "{\"version\": 1, \"keys\": {\"openai\": 42, \"x\": \"sk-precious\"}}".to_string(),
        "{\"version\": 1, \"keys\": [\"sk-precious\"]}".to_string(),
        "not json at all sk-precious".to_string(),
    ] {
        std::fs::write(&path, &garbage).unwrap();
        for err in [
            store.get("openai").unwrap_err(),
            store.set("openai", &"sk-new".into()).unwrap_err(),
            store.delete("openai").unwrap_err(),
        ] {
            assert!(
                matches!(err, LlmError::CorruptSecretsFile { .. }),
                "{err:?}"
            );
            let text = err.to_string();
            assert!(text.contains("secrets.json"), "{text}");
            assert!(text.contains("untouched"), "{text}");
            assert!(!text.contains("sk-precious"), "{text}");
            assert!(!format!("{err:?}").contains("sk-precious"));
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), garbage);
    }

    std::fs::write(&path, "{\"version\": 9, \"keys\": {}}").unwrap();
    let err = store.get("openai").unwrap_err();
    assert!(
        matches!(err, LlmError::UnsupportedSecretsFile { version: 9, .. }),
        "{err:?}"
    );
}

#[test]
fn the_keyring_is_used_or_the_file_with_a_one_line_warning() {
    // This machine has no Secret Service, a desktop has one: assert what holds either way,
    // and write nothing to a real keyring.
    let dir = tempfile::tempdir().unwrap();
    let (store, warning) = SecretStore::open_with(dir.path(), BackendChoice::Auto).unwrap();
    match store.backend() {
        SecretBackend::Keyring => assert!(warning.is_none()),
        SecretBackend::File(path) => {
            assert_eq!(path, dir.path().join(SECRETS_FILE));
            let warning = warning.expect("a fallback says so");
            assert!(!warning.contains('\n'), "{warning}");
            assert!(warning.contains("keyring"), "{warning}");
            assert!(warning.contains(&path.display().to_string()), "{warning}");
            assert!(store.take_warning().is_none(), "said once, not twice");
            store.set("openai", &"sk-fallback".into()).unwrap();
            assert_owner_only(&path);
            assert_eq!(
                store.get("openai").unwrap().unwrap().expose(),
                "sk-fallback"
            );
        }
    }
    match SecretStore::open_with(dir.path(), BackendChoice::Keyring) {
        Ok((store, warning)) => {
            assert_eq!(store.backend(), SecretBackend::Keyring);
            assert!(warning.is_none());
        }
        Err(err) => {
            assert!(
                matches!(err, LlmError::KeyringUnavailable { .. }),
                "{err:?}"
            );
            assert!(
                err.to_string().contains("DECIMA_SECRET_BACKEND=file"),
                "{err}"
            );
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_async_api_round_trips_through_the_file_on_a_single_threaded_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let (store, warning) = SecretStore::open_with_async(dir.path(), BackendChoice::File)
        .await
        .unwrap();
    assert!(warning.is_none());
    store
        .set_async("openai", &ApiKey::new("sk-async\n"))
        .await
        .unwrap();
    // The blocking API sees what the async one wrote: one store, two ways in.
    assert_eq!(store.get("openai").unwrap().unwrap().expose(), "sk-async");
    assert_eq!(
        store.get_async("openai").await.unwrap().unwrap().expose(),
        "sk-async"
    );
    assert_owner_only(&dir.path().join(SECRETS_FILE));
    assert!(store.delete_async("openai").await.unwrap());
    assert!(!store.delete_async("openai").await.unwrap());
    assert!(store.get_async("openai").await.unwrap().is_none());
    let refused = store.set_async("openai", &"  ".into()).await;
    assert!(
        matches!(refused, Err(LlmError::InvalidKey(_))),
        "{refused:?}"
    );
}

#[cfg(windows)]
#[test]
fn the_file_and_a_new_folder_are_the_user_s_alone_and_no_temp_files_remain() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fresh").join("decima");
    let store = file_store(&data);
    store.set("openai", &"sk-private".into()).unwrap();
    let path = data.join(SECRETS_FILE);
    // Protected (nothing inherited from the folder above), one entry: the user, full access;
    // a data directory created here likewise, and what is made in it inherits that.
    assert_owner_only(&path);
    acl::assert_private(&data, "OICI");
    store.set("openai", &"sk-private-2".into()).unwrap();
    assert_owner_only(&path);
    for entry in std::fs::read_dir(&data).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "leftover temp file {name}");
        assert!(
            acl::dacl(&entry.path()).contains(&format!(";FA;;;{})", acl::user())),
            "{name} is the user's"
        );
        assert!(
            !acl::dacl(&entry.path()).contains(";WD)"),
            "{name} is private"
        );
    }
}

#[cfg(windows)]
#[test]
fn a_loosened_file_is_made_the_user_s_alone_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    store.set("openai", &"sk-x".into()).unwrap();
    let path = dir.path().join(SECRETS_FILE);
    acl::open_to_everyone(&path);
    assert!(acl::dacl(&path).contains(";;;WD)"), "{}", acl::dacl(&path));
    assert_eq!(store.get("openai").unwrap().unwrap().expose(), "sk-x");
    assert_owner_only(&path);
}
