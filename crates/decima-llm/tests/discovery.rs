//! Asking servers the context window they serve: llama.cpp for real (started from the test), and
//! Ollama, vLLM, SGLang, LM Studio and OpenRouter through the test server answering their
//! endpoints as they do, broken llama.cpp answers included.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use decima_core::{FailureClass, Role};
use decima_llm::discovery::{MAX_WINDOW, REQUEST_TIMEOUT};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, HttpProvider, LlmError, Protocol, Provider, ProviderConfig, Served,
    ServerFamily, Timeouts, collect, discover, served_limit,
};
use decima_testkit::LlmServer;
use decima_testkit::llamacpp::{LlamaCppServer, Options};
use decima_testkit::llm_server::discovery::{
    self, LmStudioModel, OllamaModel, VllmCard, garbage, hangup, llamacpp_props, llamacpp_slots,
    llamacpp_slots_disabled,
};

const KEY: &str = "sk-test-discovery-0123456789";

fn config(base: String, model: &str) -> ProviderConfig {
    let mut config = ProviderConfig::new("local", Protocol::OpenAi, base, model);
    config.api_key = Some(SecretString::new(KEY));
    config.timeouts = Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(5),
        total: Duration::from_secs(20),
    };
    config
}

async fn ask(server: &LlmServer, model: &str, family: ServerFamily) -> Option<Served> {
    discover(&config(server.openai_base_url(), model), family)
        .await
        .unwrap()
}

async fn refused(server: &LlmServer, family: ServerFamily) -> LlmError {
    let err = discover(&config(server.openai_base_url(), "m"), family)
        .await
        .unwrap_err();
    assert!(!err.to_string().contains(KEY), "the key leaked: {err}");
    err
}

// ---------- llama.cpp, the real server ----------

async fn llamacpp(server: &LlamaCppServer) -> Result<Option<Served>, LlmError> {
    discover(
        &config(server.base_url(), "local-model"),
        ServerFamily::LlamaCpp,
    )
    .await
}

#[tokio::test]
async fn llamacpp_started_with_2048_says_2048_and_refuses_longer_prompts_naming_it() {
    let server = LlamaCppServer::start(2048).await;
    let served = llamacpp(&server).await.unwrap().unwrap();
    assert_eq!(served.window, 2048);
    assert_eq!(served.slots, vec![2048]);
    assert_eq!(served.family, ServerFamily::LlamaCpp);
    assert!(served.model.unwrap().ends_with(".gguf"));
    assert_eq!(served.model_max, Some(8192), "SmolLM2 was trained for 8192");
    assert!(!served.floor);

    // Its refusal of a longer prompt names the same limit.
    let provider = HttpProvider::new(config(server.base_url(), "local-model")).unwrap();
    let request = ChatRequest {
        model: "local-model".into(),
        messages: [ChatMessage::new(Role::User, "word ".repeat(3000))]
            .map(std::sync::Arc::new)
            .into(),
        max_tokens: Some(8),
        ..ChatRequest::default()
    };
    let err = collect(provider.stream(&request)).await.unwrap_err();
    let LlmError::ContextOverflow { message, .. } = &err else {
        panic!("not an overflow: {err}");
    };
    assert_eq!(served_limit(message), Some(2048), "{message}");
}

#[tokio::test]
async fn llamacpp_started_with_4096_says_4096() {
    let server = LlamaCppServer::start(4096).await;
    let served = llamacpp(&server).await.unwrap().unwrap();
    assert_eq!((served.window, served.slots), (4096, vec![4096]));
}

#[tokio::test]
async fn llamacpp_over_two_slots_says_each_slots_share() {
    let server = LlamaCppServer::start_with(Options {
        parallel: 2,
        ..Options::new(4096)
    })
    .await;
    let served = llamacpp(&server).await.unwrap().unwrap();
    assert_eq!((served.window, served.slots), (2048, vec![2048, 2048]));
}

#[tokio::test]
async fn llamacpp_without_its_slots_endpoint_is_read_from_its_props() {
    let server = LlamaCppServer::start_with(Options {
        slots_endpoint: false,
        ..Options::new(4096)
    })
    .await;
    let served = llamacpp(&server).await.unwrap().unwrap();
    assert_eq!((served.window, served.slots), (4096, vec![4096]));
}

#[tokio::test]
async fn a_llamacpp_server_that_is_gone_is_unreachable() {
    let server = LlamaCppServer::start(2048).await;
    let config = config(server.base_url(), "local-model");
    assert_eq!(
        discover(&config, ServerFamily::LlamaCpp)
            .await
            .unwrap()
            .unwrap()
            .window,
        2048
    );
    drop(server);
    let err = discover(&config, ServerFamily::LlamaCpp).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("/props") && text.contains("llama.cpp"),
        "{text}"
    );
}

// ---------- llama.cpp, broken answers ----------

#[tokio::test]
async fn llamacpp_garbage_props_are_refused_as_garbage() {
    let server = LlmServer::start().await;
    server.route(garbage("GET", "/props"));
    let err = refused(&server, ServerFamily::LlamaCpp).await;
    assert!(matches!(err, LlmError::Protocol { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("not JSON") && text.contains("502 Bad Gateway"),
        "{text}"
    );
    assert!(text.contains("llama.cpp server"), "{text}");
}

#[tokio::test]
async fn llamacpp_windows_of_0_and_a_billion_are_refused_saying_so() {
    let server = LlmServer::start().await;
    server.route(llamacpp_slots(&[4096]));
    server.route(llamacpp_props(0, 1));
    let text = refused(&server, ServerFamily::LlamaCpp).await.to_string();
    assert!(
        text.contains("window of 0 tokens") && text.contains("refused"),
        "{text}"
    );

    server.route(llamacpp_props(1_000_000_000, 1));
    let text = refused(&server, ServerFamily::LlamaCpp).await.to_string();
    assert!(
        text.contains("window of 1000000000 tokens") && text.contains("refused"),
        "{text}"
    );
    assert!(text.contains(&MAX_WINDOW.to_string()), "{text}");

    server.route(llamacpp_props(4096, 1));
    server.route(llamacpp_slots(&[4096, 0]));
    let text = refused(&server, ServerFamily::LlamaCpp).await.to_string();
    assert!(
        text.contains("window of 0 tokens"),
        "a slot's 0 too: {text}"
    );
}

#[tokio::test]
async fn llamacpp_dying_mid_discovery_is_unreachable() {
    let server = LlmServer::start().await;
    server.route(llamacpp_props(4096, 1));
    server.route(hangup("GET", "/slots"));
    let err = refused(&server, ServerFamily::LlamaCpp).await;
    assert!(matches!(err, LlmError::Connect { .. }), "{err}");
    assert_eq!(err.class(), FailureClass::Transient);
    assert!(err.to_string().contains("/slots"), "{err}");
}

#[tokio::test]
async fn llamacpp_slots_off_stand_in_for_props_and_the_smallest_slot_is_the_window() {
    let server = LlmServer::start().await;
    server.route(llamacpp_props(8192, 2));
    server.route(llamacpp_slots_disabled());
    let served = ask(&server, "m", ServerFamily::LlamaCpp).await.unwrap();
    assert_eq!((served.window, served.slots), (8192, vec![8192, 8192]));
    server.route(llamacpp_slots(&[8192, 4096]));
    let served = ask(&server, "m", ServerFamily::LlamaCpp).await.unwrap();
    assert_eq!(
        (served.window, served.slots),
        (4096, vec![8192, 4096]),
        "a request may get the smallest slot"
    );
    let requests = server.requests();
    assert_eq!(requests[0].path, "/props");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str()),
        "sent the key as the OpenAI protocol does"
    );
}

#[tokio::test]
async fn a_server_echoing_the_key_does_not_put_it_in_the_error() {
    let server = LlmServer::start().await;
    let mut route = garbage("GET", "/props");
    if let discovery::DiscoveryReply::Body { body, .. } = &mut route.reply {
        *body = format!("<html>Bearer {KEY}</html>");
    }
    server.route(route);
    let text = refused(&server, ServerFamily::LlamaCpp).await.to_string();
    assert!(text.contains("***"), "{text}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_as_unreachable() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    // Accepts, reads nothing, answers nothing.
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            sockets.push(socket);
        }
    });
    let started = std::time::Instant::now();
    let err = discover(&config(base, "m"), ServerFamily::Vllm)
        .await
        .unwrap_err();
    held.abort();
    assert!(matches!(err, LlmError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("no answer within"), "{err}");
    assert!(started.elapsed() < REQUEST_TIMEOUT + Duration::from_secs(3));
}

// ---------- Ollama ----------

fn llama31() -> OllamaModel {
    OllamaModel::new("llama3.1", "llama", 131_072)
}

#[tokio::test]
async fn ollama_serves_the_modelfiles_num_ctx_capped_at_the_trained_window() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show(&OllamaModel {
        num_ctx: Some(8192),
        ..llama31()
    }));
    let served = ask(&server, "llama3.1", ServerFamily::Ollama)
        .await
        .unwrap();
    assert_eq!(served.window, 8192);
    assert_eq!(served.model_max, Some(131_072));
    assert!(!served.floor);
    let show = &server.requests()[0];
    assert_eq!(
        (show.method.as_str(), show.path.as_str()),
        ("POST", "/api/show")
    );
    assert_eq!(show.json.as_ref().unwrap()["model"], "llama3.1");
    assert_eq!(server.requests().len(), 1, "a modelfile num_ctx settles it");

    server.route(discovery::ollama_show(&OllamaModel {
        num_ctx: Some(262_144),
        ..llama31()
    }));
    let served = ask(&server, "llama3.1", ServerFamily::Ollama)
        .await
        .unwrap();
    assert_eq!(served.window, 131_072);
}

#[tokio::test]
async fn ollama_serves_what_the_loaded_runner_has() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show(&llama31()));
    server.route(discovery::ollama_ps(&[
        ("qwen3", 8192),
        ("llama3.1", 32_768),
    ]));
    let served = ask(&server, "llama3.1:latest", ServerFamily::Ollama)
        .await
        .unwrap();
    assert_eq!((served.window, served.floor), (32_768, false));
}

#[tokio::test]
async fn ollama_without_the_model_loaded_plans_for_its_smallest_default() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show(&llama31()));
    server.route(discovery::ollama_ps(&[("qwen3", 8192)]));
    let served = ask(&server, "llama3.1", ServerFamily::Ollama)
        .await
        .unwrap();
    assert_eq!((served.window, served.floor), (4096, true));
    assert_eq!(served.model_max, Some(131_072));

    server.route(discovery::ollama_show(&OllamaModel::new(
        "tiny", "llama", 2048,
    )));
    let served = ask(&server, "tiny", ServerFamily::Ollama).await.unwrap();
    assert_eq!(served.window, 2048, "never more than the model takes");
}

#[tokio::test]
async fn an_ollama_cloud_model_serves_its_whole_window() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show(&OllamaModel {
        remote_host: Some("https://ollama.com:443".into()),
        ..OllamaModel::new("gpt-oss:120b-cloud", "gptoss", 131_072)
    }));
    let served = ask(&server, "gpt-oss:120b-cloud", ServerFamily::Ollama)
        .await
        .unwrap();
    assert_eq!((served.window, served.floor), (131_072, false));
}

#[tokio::test]
async fn ollama_without_the_model_says_to_pull_it() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show_missing("llama9"));
    let err = refused(&server, ServerFamily::Ollama).await;
    assert_eq!(err.class(), FailureClass::Data);
    let text = err.to_string();
    assert!(
        text.contains("ollama pull") && text.contains("not found"),
        "{text}"
    );
}

#[tokio::test]
async fn ollama_refuses_absurd_windows() {
    let server = LlmServer::start().await;
    server.route(discovery::ollama_show(&OllamaModel {
        num_ctx: Some(1_000_000_000),
        ..llama31()
    }));
    let text = refused(&server, ServerFamily::Ollama).await.to_string();
    assert!(
        text.contains("1000000000 tokens") && text.contains("refused"),
        "{text}"
    );
}

// ---------- vLLM and SGLang ----------

fn card(id: &str, len: Option<u64>, parent: Option<&str>) -> VllmCard {
    VllmCard {
        id: id.into(),
        max_model_len: len,
        parent: parent.map(str::to_owned),
    }
}

#[tokio::test]
async fn vllm_serves_its_max_model_len() {
    let server = LlmServer::start().await;
    server.route(discovery::vllm_models(&[
        card("Qwen/Qwen3-8B", Some(32_768), None),
        card("sql-lora", None, Some("Qwen/Qwen3-8B")),
    ]));
    let served = ask(&server, "Qwen/Qwen3-8B", ServerFamily::Vllm)
        .await
        .unwrap();
    assert_eq!(served.window, 32_768);
    assert_eq!(served.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(server.requests()[0].path, "/v1/models");
    let lora = ask(&server, "sql-lora", ServerFamily::Vllm).await.unwrap();
    assert_eq!(lora.window, 32_768);
    let err = refused(&server, ServerFamily::Vllm).await;
    assert!(matches!(err, LlmError::Config(_)), "{err}");
    assert!(err.to_string().contains("Qwen/Qwen3-8B, sql-lora"), "{err}");
}

#[tokio::test]
async fn sglang_is_asked_the_same_way() {
    let server = LlmServer::start().await;
    server.route(discovery::vllm_models(&[card(
        "default",
        Some(65_536),
        None,
    )]));
    let served = ask(&server, "local-model", ServerFamily::Sglang)
        .await
        .unwrap();
    assert_eq!(
        (served.window, served.family),
        (65_536, ServerFamily::Sglang)
    );
}

// ---------- LM Studio ----------

fn lms(id: &str, loaded: Option<u64>) -> LmStudioModel {
    LmStudioModel {
        id: id.into(),
        kind: "llm".into(),
        max_context_length: 131_072,
        loaded_context_length: loaded,
    }
}

#[tokio::test]
async fn lmstudio_serves_the_loaded_context_length() {
    let server = LlmServer::start().await;
    server.route(discovery::lmstudio_models(&[
        lms("qwen2.5-coder-7b-instruct", Some(16_384)),
        lms("meta-llama-3.1-8b-instruct", None),
    ]));
    let served = ask(&server, "qwen2.5-coder-7b-instruct", ServerFamily::LmStudio)
        .await
        .unwrap();
    assert_eq!((served.window, served.model_max), (16_384, Some(131_072)));
    assert_eq!(server.requests()[0].path, "/api/v0/models");
    assert_eq!(
        ask(
            &server,
            "meta-llama-3.1-8b-instruct",
            ServerFamily::LmStudio
        )
        .await,
        None,
        "not loaded: LM Studio cannot say yet"
    );
}

// ---------- OpenRouter ----------

#[tokio::test]
async fn openrouter_gives_the_models_context_length_or_nothing() {
    let server = LlmServer::start().await;
    server.route(discovery::openrouter_models(
        "/v1/models",
        &[
            ("openai/gpt-4.1", Some(1_047_576), Some(1_047_576)),
            ("meta-llama/llama-3.1-8b-instruct", None, Some(16_384)),
        ],
    ));
    let served = ask(&server, "openai/gpt-4.1", ServerFamily::OpenRouter)
        .await
        .unwrap();
    assert_eq!(served.window, 1_047_576);
    let top = ask(
        &server,
        "meta-llama/llama-3.1-8b-instruct",
        ServerFamily::OpenRouter,
    )
    .await
    .unwrap();
    assert_eq!(top.window, 16_384);
    assert_eq!(
        ask(&server, "nobody/none", ServerFamily::OpenRouter).await,
        None
    );
}

// ---------- Hosted ----------

#[tokio::test]
async fn hosted_apis_are_not_asked() {
    let server = LlmServer::start().await;
    assert_eq!(ask(&server, "gpt-4.1", ServerFamily::Hosted).await, None);
    assert!(server.requests().is_empty());
}
