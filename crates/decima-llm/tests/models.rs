//! Listing a server's models, for the first-start setup: the real shapes of OpenAI's and
//! Anthropic's `/models` answers (sent verbatim by the wire-level test server), the key in the
//! header each protocol uses, and errors a person can act on.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_llm::secrets::SecretString;
use decima_llm::{LlmError, Protocol, ProviderConfig, models};
use decima_testkit::{LlmServer, Reply};

fn json(status: u16, body: &str) -> Reply {
    Reply::Status {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.into(),
    }
}

fn header(server: &LlmServer, name: &str) -> Option<String> {
    server.requests()[0]
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

#[tokio::test]
async fn an_openai_compatible_server_lists_its_models_sorted_and_once() {
    let server = LlmServer::start().await;
    // OpenAI's own shape (object, created, owned_by), with a repeat the way some proxies send.
    server.enqueue(json(
        200,
        r#"{"object":"list","data":[{"id":"gpt-4.1-mini","object":"model","created":1744316542,"owned_by":"system"},{"id":"gpt-4.1","object":"model","created":1744316542,"owned_by":"system"},{"id":"gpt-4.1-mini","object":"model","created":1744316542,"owned_by":"system"}]}"#,
    ));
    let mut config = ProviderConfig::new("local", Protocol::OpenAi, server.openai_base_url(), "");
    config.api_key = Some(SecretString::from("sk-test-123".to_owned()));
    let ids = models::list(&config).await.unwrap();
    assert_eq!(ids, ["gpt-4.1", "gpt-4.1-mini"]);
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        header(&server, "authorization").as_deref(),
        Some("Bearer sk-test-123")
    );
}

#[tokio::test]
async fn anthropic_lists_under_v1_with_its_own_headers() {
    let server = LlmServer::start().await;
    server.enqueue(json(
        200,
        r#"{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-sonnet-4-5-20250929"}"#,
    ));
    let mut config = ProviderConfig::new(
        "claude",
        Protocol::Anthropic,
        server.anthropic_base_url(),
        "",
    );
    config.api_key = Some(SecretString::from("sk-ant-test".to_owned()));
    let ids = models::list(&config).await.unwrap();
    assert_eq!(ids, ["claude-sonnet-4-5-20250929"]);
    assert_eq!(server.requests()[0].path, "/v1/models");
    assert_eq!(header(&server, "x-api-key").as_deref(), Some("sk-ant-test"));
    assert!(header(&server, "anthropic-version").is_some());
}

#[tokio::test]
async fn a_refused_key_an_odd_answer_and_no_server_are_errors_that_say_which() {
    let server = LlmServer::start().await;
    server.enqueue(json(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    ));
    let mut config = ProviderConfig::new("local", Protocol::OpenAi, server.openai_base_url(), "");
    config.api_key = Some(SecretString::from("sk-bad".to_owned()));
    let err = models::list(&config).await.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err}");
    assert!(
        !err.to_string().contains("sk-bad"),
        "the key is redacted: {err}"
    );

    server.enqueue(json(200, r#"<html>not an API</html>"#));
    let err = models::list(&config).await.unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err}");

    let gone = ProviderConfig::new("gone", Protocol::OpenAi, "http://127.0.0.1:9/v1", "");
    let err = models::list(&gone).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err}");
}
