//! The endpoints servers answer about themselves, for tests of asking a server the context
//! window it serves: Ollama's `POST /api/show` and `GET /api/ps`, vLLM's `GET /v1/models`, LM
//! Studio's `GET /api/v0/models`, OpenRouter's model list, and llama.cpp's `GET /props` and
//! `GET /slots` broken the ways a test needs (llama.cpp itself runs in the tests, see
//! [`crate::llamacpp`]).
//!
//! Each body is written as the real server writes it: its fields in the order its code declares
//! them, its JSON encoder's spacing and escaping (Go's encoding/json escapes `<`, `>` and `&`;
//! Python's Starlette writes compact JSON; LM Studio indents by two spaces). A route answers
//! every request to its method and path (query aside) until replaced, before any scripted reply.
//!
//! ```no_run
//! # async fn demo() {
//! use decima_testkit::LlmServer;
//! use decima_testkit::llm_server::discovery::{self, OllamaModel};
//! let server = LlmServer::start().await;
//! server.route(discovery::ollama_show(&OllamaModel::new("llama3.1", "llama", 131_072)));
//! # }
//! ```

use std::sync::Mutex;

use super::http::{self, Conn};
use super::{LlmServer, Shared, lock};

/// What a route answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoveryReply {
    /// A complete response: status, the server's own headers, the body verbatim.
    Body {
        /// The HTTP status.
        status: u16,
        /// Headers as the server sends them (a `date` comes first, and `content-length` and
        /// `connection` are added).
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// The connection is closed without an answer, as when the server dies mid-request.
    Hangup,
}

/// A method and path and what the server answers there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// `GET` or `POST`.
    pub method: String,
    /// The path, without a query.
    pub path: String,
    /// The answer.
    pub reply: DiscoveryReply,
}

/// The server's routes, first match wins.
#[derive(Default)]
pub(super) struct Routes(Mutex<Vec<Route>>);

impl LlmServer {
    /// Answers every request to `route`'s method and path with its reply, replacing an earlier
    /// route there; scripted replies are left for the other paths.
    pub fn route(&self, route: Route) {
        let mut routes = lock(&self.shared.discovery.0);
        routes.retain(|r| !(r.method == route.method && r.path == route.path));
        routes.push(route);
    }
}

/// The reply routed for `method path`, if any.
pub(super) fn routed(shared: &Shared, method: &str, path: &str) -> Option<DiscoveryReply> {
    let path = path.split('?').next().unwrap_or(path);
    lock(&shared.discovery.0)
        .iter()
        .find(|r| r.method.eq_ignore_ascii_case(method) && r.path == path)
        .map(|r| r.reply.clone())
}

/// Writes `reply`; returns whether the connection can take another request.
pub(super) async fn answer(conn: &mut Conn, reply: DiscoveryReply, close: bool) -> bool {
    let DiscoveryReply::Body {
        status,
        mut headers,
        body,
    } = reply
    else {
        return false;
    };
    headers.push(("content-length".to_owned(), body.len().to_string()));
    headers.push(("connection".to_owned(), http::connection_value(close)));
    let mut bytes = http::head(status, &headers);
    bytes.extend_from_slice(body.as_bytes());
    conn.write_plain(&bytes).await.is_ok() && !close
}

fn route(method: &str, path: &str, status: u16, headers: &[(&str, &str)], body: String) -> Route {
    Route {
        method: method.to_owned(),
        path: path.to_owned(),
        reply: DiscoveryReply::Body {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body,
        },
    }
}

/// A JSON string literal.
fn s(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// A JSON string literal as Go's encoding/json writes it: `<`, `>` and `&` escaped.
fn go_s(text: &str) -> String {
    s(text)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// An optional number, `null` when absent.
fn n(value: Option<u64>) -> String {
    value.map_or("null".to_owned(), |v| v.to_string())
}

// ---------- Ollama (ollama/ollama: api/types.go, server/routes.go) ----------

/// Gin's `c.JSON` headers.
const GIN: &[(&str, &str)] = &[("Content-Type", "application/json; charset=utf-8")];

/// One Ollama model, as `/api/show` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OllamaModel {
    /// Its name, e.g. `llama3.1` (shown as `llama3.1:latest`).
    pub name: String,
    /// `general.architecture`, e.g. `llama`.
    pub arch: String,
    /// `<arch>.context_length`; None for a model whose info has none.
    pub context_length: Option<u64>,
    /// The modelfile's `PARAMETER num_ctx`.
    pub num_ctx: Option<u64>,
    /// `remote_host` of a model served from ollama.com.
    pub remote_host: Option<String>,
}

impl OllamaModel {
    /// A local GGUF model with a trained context and no `num_ctx`.
    pub fn new(name: &str, arch: &str, context_length: u64) -> OllamaModel {
        OllamaModel {
            name: name.to_owned(),
            arch: arch.to_owned(),
            context_length: Some(context_length),
            num_ctx: None,
            remote_host: None,
        }
    }

    fn tagged(&self) -> String {
        if self.name.contains(':') {
            self.name.clone()
        } else {
            format!("{}:latest", self.name)
        }
    }
}

/// `POST /api/show` for `model`: `ShowResponse` in declaration order, `model_info`'s keys sorted
/// (Go sorts map keys), `parameters` as `GetModelInfo` pads them (`%-30s %#v`).
pub fn ollama_show(model: &OllamaModel) -> Route {
    let mut parameters = Vec::new();
    let mut modelfile = format!(
        "# Modelfile generated by \"ollama show\"\n# To build a new Modelfile based on this, \
         replace FROM with:\n# FROM {}\n\nFROM /root/.ollama/models/blobs/sha256-667b0c1932bc6f\
         fc593ed1d03f895bf2dc8dc6df21db3042284a6f4416b06a29\nTEMPLATE {{{{ .Prompt }}}}\n",
        model.tagged()
    );
    if let Some(num_ctx) = model.num_ctx {
        parameters.push(format!("{:<30} {num_ctx}", "num_ctx"));
        modelfile.push_str(&format!("PARAMETER num_ctx {num_ctx}\n"));
    }
    parameters.push(format!("{:<30} {}", "stop", s("<|eot_id|>")));
    modelfile.push_str("PARAMETER stop <|eot_id|>\n");
    let arch = &model.arch;
    let mut info = vec![
        ("general.architecture".to_owned(), s(arch)),
        ("general.file_type".to_owned(), "15".to_owned()),
        (
            "general.parameter_count".to_owned(),
            "8030261312".to_owned(),
        ),
        ("general.quantization_version".to_owned(), "2".to_owned()),
        (format!("{arch}.attention.head_count"), "32".to_owned()),
        (format!("{arch}.block_count"), "32".to_owned()),
        (format!("{arch}.embedding_length"), "4096".to_owned()),
        (format!("{arch}.rope.freq_base"), "500000".to_owned()),
        ("tokenizer.ggml.merges".to_owned(), "[]".to_owned()),
        ("tokenizer.ggml.model".to_owned(), s("gpt2")),
        ("tokenizer.ggml.tokens".to_owned(), "[]".to_owned()),
    ];
    if let Some(len) = model.context_length {
        info.push((format!("{arch}.context_length"), len.to_string()));
    }
    info.sort();
    let info: Vec<String> = info.iter().map(|(k, v)| format!("{}:{v}", s(k))).collect();
    let remote = model.remote_host.as_deref().map_or(String::new(), |host| {
        format!(
            r#","remote_model":{},"remote_host":{}"#,
            s(&model.name),
            s(host)
        )
    });
    let body = format!(
        r#"{{"license":"LLAMA 3.1 COMMUNITY LICENSE AGREEMENT","modelfile":{},"parameters":{},"template":"{{{{ .Prompt }}}}","details":{{"parent_model":"","format":"gguf","family":{},"families":[{}],"parameter_size":"8.0B","quantization_level":"Q4_K_M"}}{remote},"model_info":{{{}}},"capabilities":["completion","tools"],"modified_at":"2025-06-04T14:38:31.83753-07:00"}}"#,
        go_s(&modelfile),
        go_s(&parameters.join("\n")),
        s(arch),
        s(arch),
        info.join(",")
    );
    route("POST", "/api/show", 200, GIN, body)
}

/// `POST /api/show` for a model Ollama does not have (server/routes.go, `ShowHandler`).
pub fn ollama_show_missing(name: &str) -> Route {
    let body = format!(
        r#"{{"error":{}}}"#,
        go_s(&format!("model '{name}' not found"))
    );
    route("POST", "/api/show", 404, GIN, body)
}

/// `GET /api/ps` with `loaded` models (name, `context_length`), longest-lived first.
pub fn ollama_ps(loaded: &[(&str, u64)]) -> Route {
    let models: Vec<String> = loaded
        .iter()
        .map(|(name, context_length)| {
            let name = OllamaModel::new(name, "llama", 0).tagged();
            format!(
                r#"{{"name":{n},"model":{n},"size":6654289920,"digest":"46e0c10c039e019119339687c3c1757cc81b9da49709a3b3924863ba87ca666e","details":{{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"8.0B","quantization_level":"Q4_K_M"}},"expires_at":"2025-06-04T14:43:31.83753-07:00","size_vram":6654289920,"context_length":{context_length}}}"#,
                n = s(&name)
            )
        })
        .collect();
    route(
        "GET",
        "/api/ps",
        200,
        GIN,
        format!(r#"{{"models":[{}]}}"#, models.join(",")),
    )
}

// ---------- vLLM (vllm/entrypoints/openai/engine/protocol.py, models/serving.py) ----------

/// Uvicorn's headers for Starlette's `JSONResponse`.
const UVICORN: &[(&str, &str)] = &[("server", "uvicorn"), ("content-type", "application/json")];

/// One card of vLLM's model list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VllmCard {
    /// The served name (`--served-model-name`, or a LoRA adapter's name).
    pub id: String,
    /// `max_model_len`; None on a LoRA adapter's card.
    pub max_model_len: Option<u64>,
    /// A LoRA adapter's base model.
    pub parent: Option<String>,
}

/// `GET /v1/models`: `ModelList.model_dump()` as Starlette writes it (compact).
pub fn vllm_models(cards: &[VllmCard]) -> Route {
    let cards: Vec<String> = cards
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                r#"{{"id":{},"object":"model","created":1760000000,"owned_by":"vllm","root":{},"parent":{},"max_model_len":{},"permission":[{{"id":"modelperm-{i:032x}","object":"model_permission","created":1760000000,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"*","group":null,"is_blocking":false}}]}}"#,
                s(&c.id),
                s(&format!("/models/{}", c.id)),
                c.parent.as_deref().map_or("null".to_owned(), s),
                n(c.max_model_len)
            )
        })
        .collect();
    let body = format!(r#"{{"object":"list","data":[{}]}}"#, cards.join(","));
    route("GET", "/v1/models", 200, UVICORN, body)
}

// ---------- LM Studio (lmstudio.ai/docs/developer/rest/endpoints) ----------

/// One model of LM Studio's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LmStudioModel {
    /// Its id, e.g. `qwen2.5-coder-7b-instruct`.
    pub id: String,
    /// `llm`, `vlm` or `embeddings`.
    pub kind: String,
    /// `max_context_length`.
    pub max_context_length: u64,
    /// `loaded_context_length` when loaded (`state` is then `loaded`).
    pub loaded_context_length: Option<u64>,
}

/// `GET /api/v0/models`, indented by two spaces as LM Studio writes it.
pub fn lmstudio_models(models: &[LmStudioModel]) -> Route {
    let entries: Vec<String> = models
        .iter()
        .map(|m| {
            let loaded = m.loaded_context_length.map_or(String::new(), |len| {
                format!(",\n      \"loaded_context_length\": {len}")
            });
            format!(
                "    {{\n      \"id\": {},\n      \"object\": \"model\",\n      \"type\": {},\n      \
                 \"publisher\": \"lmstudio-community\",\n      \"arch\": \"qwen2\",\n      \
                 \"compatibility_type\": \"gguf\",\n      \"quantization\": \"Q4_K_M\",\n      \
                 \"state\": {},\n      \"max_context_length\": {}{loaded}\n    }}",
                s(&m.id),
                s(&m.kind),
                s(if m.loaded_context_length.is_some() {
                    "loaded"
                } else {
                    "not-loaded"
                }),
                m.max_context_length
            )
        })
        .collect();
    let body = format!(
        "{{\n  \"object\": \"list\",\n  \"data\": [\n{}\n  ]\n}}",
        entries.join(",\n")
    );
    let headers = &[
        ("X-Powered-By", "Express"),
        ("Content-Type", "application/json; charset=utf-8"),
    ];
    route("GET", "/api/v0/models", 200, headers, body)
}

// ---------- OpenRouter (openrouter.ai/docs/models) ----------

/// `GET <base>/models` listing `models` (id, `context_length`, `top_provider.context_length`).
pub fn openrouter_models(path: &str, models: &[(&str, Option<u64>, Option<u64>)]) -> Route {
    let entries: Vec<String> = models
        .iter()
        .map(|(id, len, top)| {
            format!(
                r#"{{"id":{id},"canonical_slug":{id},"hugging_face_id":"","name":{id},"created":1744651385,"description":"A model.","context_length":{},"architecture":{{"modality":"text->text","input_modalities":["text"],"output_modalities":["text"],"tokenizer":"Other","instruct_type":null}},"pricing":{{"prompt":"0.000002","completion":"0.000008","request":"0","image":"0","web_search":"0","internal_reasoning":"0"}},"top_provider":{{"context_length":{},"max_completion_tokens":32768,"is_moderated":true}},"per_request_limits":null,"supported_parameters":["max_tokens","response_format","temperature","tools"],"default_parameters":{{}}}}"#,
                n(*len),
                n(*top),
                id = s(id)
            )
        })
        .collect();
    let body = format!(r#"{{"data":[{}]}}"#, entries.join(","));
    route(
        "GET",
        path,
        200,
        &[("content-type", "application/json")],
        body,
    )
}

// ---------- llama.cpp, broken (tools/server/server-context.cpp) ----------

/// cpp-httplib's headers as llama-server sends them.
const LLAMA_SERVER: &[(&str, &str)] = &[
    ("Server", "llama.cpp"),
    ("Access-Control-Allow-Origin", ""),
    ("Content-Type", "application/json; charset=utf-8"),
];

/// `GET /props` reporting `n_ctx` (any number, 0 and 10^9 included) over `total_slots`, with
/// the fields `get_res_props` writes, in its order.
pub fn llamacpp_props(n_ctx: i64, total_slots: u32) -> Route {
    let body = format!(
        r#"{{"default_generation_settings":{{"params":{{"seed":4294967295,"temperature":0.800000011920929,"top_k":40,"top_p":0.949999988079071,"min_p":0.05000000074505806,"max_tokens":-1,"n_predict":-1,"n_keep":0,"stream":false,"chat_format":"Content-only","reasoning_format":"none","samplers":["penalties","dry","top_n_sigma","top_k","typ_p","top_p","min_p","xtc","temperature"],"lora":[]}},"n_ctx":{n_ctx}}},"total_slots":{total_slots},"model_alias":"SmolLM2-135M-Instruct.Q4_1.gguf","model_ftype":"Q4_1","model_path":"/models/SmolLM2-135M-Instruct.Q4_1.gguf","modalities":{{"vision":false,"video":false,"audio":false}},"endpoint_slots":true,"endpoint_props":false,"endpoint_metrics":true,"ui":true,"ui_settings":{{}},"bos_token":"<|im_start|>","eos_token":"<|im_end|>","build_info":"b0-unknown","is_sleeping":false,"cors_proxy_enabled":false}}"#
    );
    route("GET", "/props", 200, LLAMA_SERVER, body)
}

/// `GET /slots` with one slot per `n_ctx`.
pub fn llamacpp_slots(n_ctx: &[i64]) -> Route {
    let slots: Vec<String> = n_ctx
        .iter()
        .enumerate()
        .map(|(id, n)| {
            format!(r#"{{"id":{id},"n_ctx":{n},"speculative":false,"is_processing":false}}"#)
        })
        .collect();
    let body = format!("[{}]", slots.join(","));
    route("GET", "/slots", 200, LLAMA_SERVER, body)
}

/// `GET /slots` of a server started with `--no-slots`.
pub fn llamacpp_slots_disabled() -> Route {
    let body = r#"{"error":{"code":501,"message":"This server does not support slots endpoint. Start it with `--slots`","type":"not_supported_error"}}"#;
    route("GET", "/slots", 501, LLAMA_SERVER, body.to_owned())
}

/// An HTML page where JSON belongs, as a proxy in front of a dead server sends it.
pub fn garbage(method: &str, path: &str) -> Route {
    let body = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center>\
                <h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n\
                </html>\r\n";
    route(
        method,
        path,
        200,
        &[("Server", "nginx"), ("Content-Type", "text/html")],
        body.to_owned(),
    )
}

/// The connection closes without an answer, as when the server dies mid-request.
pub fn hangup(method: &str, path: &str) -> Route {
    Route {
        method: method.to_owned(),
        path: path.to_owned(),
        reply: DiscoveryReply::Hangup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(route: &Route) -> serde_json::Value {
        match &route.reply {
            DiscoveryReply::Body { body, .. } => serde_json::from_str(body).unwrap(),
            DiscoveryReply::Hangup => panic!("no body"),
        }
    }

    #[test]
    fn ollama_show_writes_go_json() {
        let mut model = OllamaModel::new("llama3.1", "llama", 131_072);
        model.num_ctx = Some(8192);
        let route = ollama_show(&model);
        let DiscoveryReply::Body { body: text, .. } = &route.reply else {
            panic!("no body")
        };
        assert!(text.contains(r#""parameters":"num_ctx                        8192\nstop                           \"\u003c|eot_id|\u003e\"""#), "{text}");
        assert!(!text.contains('<'), "Go escapes <: {text}");
        let json = body(&route);
        assert_eq!(json["model_info"]["llama.context_length"], 131_072);
        let keys: Vec<&String> = json["model_info"].as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn the_other_bodies_parse_and_carry_their_windows() {
        let vllm = body(&vllm_models(&[VllmCard {
            id: "m".into(),
            max_model_len: Some(32768),
            parent: None,
        }]));
        assert_eq!(vllm["data"][0]["max_model_len"], 32768);
        let lms = body(&lmstudio_models(&[LmStudioModel {
            id: "m".into(),
            kind: "llm".into(),
            max_context_length: 32768,
            loaded_context_length: Some(8192),
        }]));
        assert_eq!(lms["data"][0]["loaded_context_length"], 8192);
        assert_eq!(
            body(&ollama_ps(&[("m", 4096)]))["models"][0]["name"],
            "m:latest"
        );
        assert_eq!(
            body(&openrouter_models("/v1/models", &[("a/b", None, Some(8))]))["data"][0]["top_provider"]
                ["context_length"],
            8
        );
        assert_eq!(
            body(&llamacpp_props(0, 1))["default_generation_settings"]["n_ctx"],
            0
        );
        assert_eq!(body(&llamacpp_slots(&[1, 2]))[1]["n_ctx"], 2);
    }
}
