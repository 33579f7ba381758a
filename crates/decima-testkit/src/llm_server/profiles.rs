//! The quirks real OpenAI-compatible servers show on the wire, and one profile per server that
//! bundles its quirks, so a client can be tested against what analysts actually run rather than
//! against OpenAI alone.
//!
//! Every quirk names where it was seen. A quirk only changes how a scripted [`Turn`] is rendered:
//! the text, reasoning, calls and usage a test scripts stay the same, so the same assertions hold
//! for every profile.

use super::script::{ReasoningField, StreamOptions, Turn};

/// How one server departs from OpenAI's chat-completions stream. All off by default, which renders
/// exactly what OpenAI sends. OpenAI protocol only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenAiQuirks {
    /// `"finish_reason": ""` on every chunk before the last instead of `null`
    /// (Ollama, ollama/ollama#4357; SGLang 0.4.3, sgl-project/sglang#3912).
    pub empty_finish_reason: bool,
    /// `"role": "assistant"` in every delta, not only the first (Ollama: `ToChunk` in
    /// ollama/ollama `openai/openai.go` sets it on every chunk).
    pub role_in_every_delta: bool,
    /// Tool-call deltas carry no `id` at all (vLLM, vllm-project/vllm#18412).
    pub omit_tool_ids: bool,
    /// Every tool call of a turn has `"index": 0`, told apart only by its id (Ollama,
    /// ollama/ollama#15457; LiteLLM's ollama_chat, BerriAI/litellm#33678; new-api's Gemini
    /// conversion, QuantumNous/new-api#2701).
    pub shared_tool_index: bool,
    /// Tool-call deltas carry no `index` (Gemini's OpenAI endpoint: THU-MAIC/OpenMAIC#1556,
    /// googleapis/python-genai#2868, open-webui/computer#224; ollama/ollama#7881 before 0.4.7).
    pub omit_tool_index: bool,
    /// Each tool call arrives whole (id, name and all its arguments) in one delta (Ollama's
    /// `ToToolCalls`; Groq, BerriAI/litellm#7621; Mistral, 64bit/async-openai#329).
    pub whole_tool_calls: bool,
    /// Argument deltas repeat the call's `id` and `type` (LiteLLM, BerriAI/litellm#20480;
    /// DashScope, spring-ai-alibaba/spring-ai-extensions#83).
    pub repeat_tool_id: bool,
    /// Argument deltas carry `"id": ""` and `"type": ""` (Gemini behind OpenAI-compatible
    /// proxies, AstrBotDevs/AstrBot#6661).
    pub empty_id_continuations: bool,
    /// Argument deltas carry `"name": ""` (LM Studio 0.3.16,
    /// lmstudio-ai/lmstudio-bug-tracker#649).
    pub empty_name_continuations: bool,
    /// With [`OpenAiQuirks::whole_tool_calls`], `arguments` is a JSON object, not a string (LiteLLM's
    /// ollama_chat, BerriAI/litellm#37792).
    pub arguments_as_object: bool,
    /// After its last argument piece, each call is sent again whole, its arguments JSON-encoded a
    /// second time (LiteLLM's "summary chunk", BerriAI/litellm#20480).
    pub duplicate_tool_summary: bool,
    /// The first tool delta of an answer's first call carries Gemini's
    /// `extra_content.google.thought_signature` (parallel calls after it carry none), and a delta
    /// holding only that metadata follows the call (open-webui/computer#224).
    pub gemini_extra_content: bool,
    /// The finish reason rides on the last content or tool chunk instead of an empty-delta chunk
    /// of its own (vLLM before vllm-project/vllm#36944).
    pub finish_on_last_delta: bool,
    /// Usage travels inside `choices[0]` of the finish chunk and no `"choices": []` chunk follows
    /// (Moonshot: higress-group/higress#1568, northes/go-moonshot#17).
    pub usage_in_choice: bool,
    /// OpenRouter's `reasoning_details` array next to each `reasoning` delta, holding the same
    /// text (openrouter.ai/docs/use-cases/reasoning-tokens).
    pub reasoning_details: bool,
    /// The server ignores `"stream": true` and answers with one `application/json` chat
    /// completion (what the client must cope with; e.g. Ollama without streamed tool calls,
    /// earendil-works/pi#1125).
    pub json_body: bool,
    /// Cache hits as DeepSeek reports them, `prompt_cache_hit_tokens` and
    /// `prompt_cache_miss_tokens` beside `prompt_tokens` (api-docs.deepseek.com/guides/kv_cache),
    /// instead of OpenAI's `prompt_tokens_details.cached_tokens`.
    pub deepseek_cache_fields: bool,
}

/// A real server whose quirks the test server can reproduce. Decima's OpenAI-compatible presets
/// each have one, plus servers that sit behind a custom base URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// OpenAI itself: the reference shape.
    OpenAi,
    /// DeepSeek: `reasoning_content`, `: keep-alive` comments under load
    /// (api-docs.deepseek.com/quick_start/rate_limit).
    DeepSeek,
    /// Qwen on DashScope's compatible mode: `reasoning_content`, ids repeated on argument deltas.
    Qwen,
    /// Moonshot (Kimi): `reasoning_content`, usage inside the finish chunk's choice.
    Moonshot,
    /// Zhipu (GLM): `reasoning_content`, otherwise OpenAI's shape.
    Zhipu,
    /// OpenRouter: `reasoning` with `reasoning_details`, `: OPENROUTER PROCESSING` comments
    /// (openrouter.ai/docs/api-reference/streaming).
    OpenRouter,
    /// Ollama: empty finish reasons, role on every delta, whole calls sharing index 0, `reasoning`.
    Ollama,
    /// LM Studio: `reasoning_content`, empty names on argument deltas.
    LmStudio,
    /// llama.cpp's server: `reasoning_content`, otherwise OpenAI's shape.
    LlamaCpp,
    /// vLLM: `reasoning` and `reasoning_content` both, no tool-call ids, finish on the last delta.
    Vllm,
    /// SGLang: empty finish reasons, `reasoning_content`.
    Sglang,
    /// LiteLLM's proxy: ids on every argument delta and a duplicate summary of each call.
    LiteLlm,
    /// LiteLLM's proxy in front of Ollama: whole calls sharing index 0 with object arguments.
    LiteLlmOllama,
    /// Gemini's OpenAI-compatible endpoint: no indexes, empty ids on continuations, thought
    /// signatures, `stop` as the finish reason of a tool-calling turn (googleapis/python-genai#2868).
    GeminiOpenAi,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 14] = [
        Profile::OpenAi,
        Profile::DeepSeek,
        Profile::Qwen,
        Profile::Moonshot,
        Profile::Zhipu,
        Profile::OpenRouter,
        Profile::Ollama,
        Profile::LmStudio,
        Profile::LlamaCpp,
        Profile::Vllm,
        Profile::Sglang,
        Profile::LiteLlm,
        Profile::LiteLlmOllama,
        Profile::GeminiOpenAi,
    ];

    /// The server's quirks.
    pub fn quirks(self) -> OpenAiQuirks {
        let none = OpenAiQuirks::default();
        match self {
            Profile::OpenAi
            | Profile::DeepSeek
            | Profile::Zhipu
            | Profile::LlamaCpp
            | Profile::OpenRouter => OpenAiQuirks {
                reasoning_details: self == Profile::OpenRouter,
                deepseek_cache_fields: self == Profile::DeepSeek,
                ..none
            },
            Profile::Qwen => OpenAiQuirks {
                repeat_tool_id: true,
                ..none
            },
            Profile::Moonshot => OpenAiQuirks {
                usage_in_choice: true,
                ..none
            },
            Profile::Ollama => OpenAiQuirks {
                empty_finish_reason: true,
                role_in_every_delta: true,
                whole_tool_calls: true,
                shared_tool_index: true,
                ..none
            },
            Profile::LmStudio => OpenAiQuirks {
                empty_name_continuations: true,
                ..none
            },
            Profile::Vllm => OpenAiQuirks {
                omit_tool_ids: true,
                finish_on_last_delta: true,
                ..none
            },
            Profile::Sglang => OpenAiQuirks {
                empty_finish_reason: true,
                ..none
            },
            Profile::LiteLlm => OpenAiQuirks {
                repeat_tool_id: true,
                duplicate_tool_summary: true,
                ..none
            },
            Profile::LiteLlmOllama => OpenAiQuirks {
                whole_tool_calls: true,
                shared_tool_index: true,
                arguments_as_object: true,
                ..none
            },
            Profile::GeminiOpenAi => OpenAiQuirks {
                omit_tool_index: true,
                empty_id_continuations: true,
                gemini_extra_content: true,
                ..none
            },
        }
    }

    /// Where the server streams reasoning; None for servers that stream none.
    pub fn reasoning_field(self) -> Option<ReasoningField> {
        match self {
            Profile::OpenAi | Profile::GeminiOpenAi | Profile::LiteLlm | Profile::LiteLlmOllama => {
                None
            }
            Profile::OpenRouter | Profile::Ollama => Some(ReasoningField::Reasoning),
            Profile::Vllm => Some(ReasoningField::Both),
            Profile::DeepSeek
            | Profile::Qwen
            | Profile::Moonshot
            | Profile::Zhipu
            | Profile::LmStudio
            | Profile::LlamaCpp
            | Profile::Sglang => Some(ReasoningField::ReasoningContent),
        }
    }

    /// The SSE comment the server sends to keep a slow stream open, if it sends one.
    pub fn keepalive_comment(self) -> Option<&'static str> {
        match self {
            Profile::DeepSeek => Some("keep-alive"),
            Profile::OpenRouter => Some("OPENROUTER PROCESSING"),
            _ => None,
        }
    }

    /// The finish reason the server sends for a turn that calls tools.
    pub fn tool_finish_reason(self) -> &'static str {
        match self {
            Profile::GeminiOpenAi => "stop",
            _ => "tool_calls",
        }
    }

    /// `turn` as this server would stream it: its quirks, its reasoning field, its keep-alive
    /// comments and its finish reason for tool calls (unless the turn sets one).
    pub fn apply(self, turn: Turn) -> Turn {
        let mut turn = Turn {
            openai: self.quirks(),
            ..turn
        };
        if let Some(field) = self.reasoning_field() {
            turn.reasoning_field = field;
        }
        if let Some(text) = self.keepalive_comment() {
            turn.options = StreamOptions {
                keepalive_comments: true,
                keepalive_text: Some(text.to_owned()),
                ..turn.options
            };
        }
        if turn.finish.is_none() && !turn.tool_calls.is_empty() {
            turn.finish = Some(self.tool_finish_reason().to_owned());
        }
        turn
    }

    /// A short name for test messages.
    pub fn name(self) -> &'static str {
        match self {
            Profile::OpenAi => "openai",
            Profile::DeepSeek => "deepseek",
            Profile::Qwen => "qwen",
            Profile::Moonshot => "moonshot",
            Profile::Zhipu => "zhipu",
            Profile::OpenRouter => "openrouter",
            Profile::Ollama => "ollama",
            Profile::LmStudio => "lmstudio",
            Profile::LlamaCpp => "llamacpp",
            Profile::Vllm => "vllm",
            Profile::Sglang => "sglang",
            Profile::LiteLlm => "litellm",
            Profile::LiteLlmOllama => "litellm-ollama",
            Profile::GeminiOpenAi => "gemini-openai",
        }
    }
}
