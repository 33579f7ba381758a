use super::*;
use std::collections::HashMap;
use std::io;

/// A keyring that works, in memory.
#[derive(Default)]
struct MemoryKeyring(Mutex<HashMap<String, String>>);

impl Vault for MemoryKeyring {
    fn get(&self, account: &str) -> keyring::Result<Option<String>> {
        Ok(self.0.lock().unwrap().get(account).cloned())
    }
    fn set(&self, account: &str, secret: &str) -> keyring::Result<()> {
        self.0
            .lock()
            .unwrap()
            .insert(account.to_string(), secret.to_string());
        Ok(())
    }
    fn delete(&self, account: &str) -> keyring::Result<bool> {
        Ok(self.0.lock().unwrap().remove(account).is_some())
    }
}

/// A keyring that fails every call the way the given constructor says.
struct FailingKeyring(fn() -> keyring::Error);

impl Vault for FailingKeyring {
    fn get(&self, _: &str) -> keyring::Result<Option<String>> {
        Err((self.0)())
    }
    fn set(&self, _: &str, _: &str) -> keyring::Result<()> {
        Err((self.0)())
    }
    fn delete(&self, _: &str) -> keyring::Result<bool> {
        Err((self.0)())
    }
}

fn no_bus() -> keyring::Error {
    keyring::Error::PlatformFailure(Box::new(io::Error::other(
        "org.freedesktop.DBus.Error.ServiceUnknown: The name is not activatable",
    )))
}

fn locked() -> keyring::Error {
    keyring::Error::NoStorageAccess(Box::new(io::Error::other("collection is locked")))
}

fn store_with(dir: &Path, keyring: Box<dyn Vault>, allow_fallback: bool) -> SecretStore {
    SecretStore::keyring_first(FileVault::new(dir), keyring, allow_fallback)
}

#[test]
fn a_working_keyring_holds_the_key_and_the_file_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), Box::new(MemoryKeyring::default()), true);
    store.set("openai", &"sk-in-keyring".into()).unwrap();
    assert_eq!(
        store.get("openai").unwrap().unwrap().expose(),
        "sk-in-keyring"
    );
    assert_eq!(store.backend(), SecretBackend::Keyring);
    assert!(!dir.path().join(SECRETS_FILE).exists());
    assert!(store.delete("openai").unwrap());
    assert!(store.get("openai").unwrap().is_none());
    assert!(store.take_warning().is_none());
}

#[test]
fn a_keyring_that_vanishes_falls_back_to_the_file_and_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), Box::new(FailingKeyring(no_bus)), true);
    store.set("deepseek", &"sk-fallback-1".into()).unwrap();
    let path = dir.path().join(SECRETS_FILE);
    assert_eq!(store.backend(), SecretBackend::File(path.clone()));
    let warning = store.take_warning().unwrap();
    assert!(!warning.contains('\n'), "{warning}");
    assert!(warning.contains("secrets.json"), "{warning}");
    assert!(!warning.contains("sk-fallback"), "{warning}");
    assert_eq!(
        store.get("deepseek").unwrap().unwrap().expose(),
        "sk-fallback-1"
    );
    assert!(store.take_warning().is_none(), "the warning comes once");
}

#[test]
fn a_key_left_in_the_file_is_found_and_moved_out_when_the_keyring_returns() {
    let dir = tempfile::tempdir().unwrap();
    FileVault::new(dir.path())
        .set("qwen", "sk-from-file")
        .unwrap();
    let store = store_with(dir.path(), Box::new(MemoryKeyring::default()), true);
    assert_eq!(store.get("qwen").unwrap().unwrap().expose(), "sk-from-file");
    store.set("qwen", &"sk-new".into()).unwrap();
    assert!(FileVault::new(dir.path()).get("qwen").unwrap().is_none());
    assert_eq!(store.get("qwen").unwrap().unwrap().expose(), "sk-new");
}

#[test]
fn each_key_is_located_where_it_really_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SECRETS_FILE);
    // A key written while the keyring was away stays in the file until set again.
    FileVault::new(dir.path())
        .set("qwen", "sk-from-file")
        .unwrap();
    let store = store_with(dir.path(), Box::new(MemoryKeyring::default()), true);
    store.set("openai", &"sk-in-keyring".into()).unwrap();
    assert_eq!(
        store.locate("openai").unwrap(),
        Some(SecretBackend::Keyring)
    );
    assert_eq!(
        store.locate("qwen").unwrap(),
        Some(SecretBackend::File(path.clone()))
    );
    assert_eq!(store.locate("absent").unwrap(), None);
    // No keyring service at all: every key is in the file, and says so.
    let bare = tempfile::tempdir().unwrap();
    let store = store_with(bare.path(), Box::new(FailingKeyring(no_bus)), true);
    store.set("deepseek", &"sk-fallback".into()).unwrap();
    assert_eq!(
        store.locate("deepseek").unwrap(),
        Some(SecretBackend::File(bare.path().join(SECRETS_FILE)))
    );
}

#[test]
fn a_locked_keyring_is_an_error_not_a_silent_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), Box::new(FailingKeyring(locked)), true);
    let err = store.set("openai", &"sk-secret-xyz".into()).unwrap_err();
    assert!(matches!(err, LlmError::Keyring { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("unlock"), "{text}");
    assert!(!text.contains("sk-secret"), "{text}");
    assert!(!format!("{err:?}").contains("sk-secret"));
    assert!(!dir.path().join(SECRETS_FILE).exists());
    assert_eq!(store.backend(), SecretBackend::Keyring);
}

#[test]
fn a_required_keyring_does_not_fall_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), Box::new(FailingKeyring(no_bus)), false);
    let err = store.get("openai").unwrap_err();
    assert!(matches!(err, LlmError::KeyringUnavailable { .. }), "{err}");
    assert!(err.to_string().contains("DECIMA_SECRET_BACKEND=file"));
}

/// A working keyring that records which threads called it.
#[derive(Default)]
struct ThreadRecordingKeyring {
    keys: MemoryKeyring,
    threads: Mutex<Vec<std::thread::ThreadId>>,
}

impl ThreadRecordingKeyring {
    fn record(&self) {
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
    }
}

impl Vault for Arc<ThreadRecordingKeyring> {
    fn get(&self, account: &str) -> keyring::Result<Option<String>> {
        self.record();
        self.keys.get(account)
    }
    fn set(&self, account: &str, secret: &str) -> keyring::Result<()> {
        self.record();
        self.keys.set(account, secret)
    }
    fn delete(&self, account: &str) -> keyring::Result<bool> {
        self.record();
        self.keys.delete(account)
    }
}

#[tokio::test(flavor = "current_thread")]
async fn async_calls_reach_the_keyring_off_the_async_worker() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(ThreadRecordingKeyring::default());
    let store = store_with(dir.path(), Box::new(Arc::clone(&keyring)), true);
    store
        .set_async("openai", &"sk-async-1".into())
        .await
        .unwrap();
    let key = store.get_async("openai").await.unwrap().unwrap();
    assert_eq!(key.expose(), "sk-async-1");
    assert!(store.delete_async("openai").await.unwrap());
    assert!(store.get_async("openai").await.unwrap().is_none());

    let worker = std::thread::current().id();
    let threads = keyring.threads.lock().unwrap().clone();
    assert_eq!(threads.len(), 4, "every call reached the keyring");
    assert!(
        threads.iter().all(|t| *t != worker),
        "no keyring call ran on the runtime's own thread"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn async_errors_and_state_are_those_of_the_blocking_calls() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), Box::new(FailingKeyring(no_bus)), true);
    let clone = store.clone();
    clone
        .set_async("deepseek", &"sk-fallback-2".into())
        .await
        .unwrap();
    // The fallback happened in a clone, on another thread: the original sees it too.
    assert_eq!(
        store.backend(),
        SecretBackend::File(dir.path().join(SECRETS_FILE))
    );
    assert!(store.take_warning().is_some());
    let err = store.set_async("bad name", &"sk-x".into()).await;
    assert!(
        matches!(err, Err(LlmError::InvalidProviderName { .. })),
        "{err:?}"
    );
}

#[test]
fn the_backend_variable_is_parsed_strictly() {
    assert_eq!(BackendChoice::parse(None).unwrap(), BackendChoice::Auto);
    assert_eq!(BackendChoice::parse(Some("")).unwrap(), BackendChoice::Auto);
    assert_eq!(
        BackendChoice::parse(Some(" FILE ")).unwrap(),
        BackendChoice::File
    );
    assert_eq!(
        BackendChoice::parse(Some("keyring")).unwrap(),
        BackendChoice::Keyring
    );
    let err = BackendChoice::parse(Some("fiel")).unwrap_err().to_string();
    assert!(
        err.contains("DECIMA_SECRET_BACKEND") && err.contains("fiel"),
        "{err}"
    );
}

#[test]
fn multi_line_keyring_messages_become_one_bounded_line() {
    let text = one_line(&format!("a\nb\r\n  c {}", "x".repeat(1000)));
    assert!(!text.contains('\n') && !text.contains('\r'));
    assert!(text.starts_with("a b c "));
    assert!(text.chars().count() <= MAX_DETAIL_CHARS + 1);
}
