//! One model call of a step: the context (the window kept from the last step, refreshed;
//! compression when a threshold is crossed), the request and its estimate, the stream, and what
//! the step cost apart from waiting.

use super::step::Step;
use super::{
    CALIBRATION_SAVE_EVERY, CALIBRATION_WARMUP, CachedContext, MAX_SHOWN_IMAGES, Runner,
    STEP_SUMMARY_TOKENS, StepError,
};
use crate::agent::failure::{Pending, Trigger};
use crate::compression::{CompressContext, compress_at, compress_built};
use crate::context::{Built, Extras, Loaded};
use crate::error::{Result, RuntimeError};
use crate::events::{Event, LayerUsage};
use crate::memo::MemoCounter;
use crate::model_call::{chat_request, stream_answer};
use decima_core::context::CompressionLevel;
use decima_core::{FailureClass, Role, ToolCall};
use decima_llm::{Completion, FinishReason, LlmError};
use decima_store::CompactionTrigger;
use std::sync::Arc;
use std::time::Instant;
use tracing::{Instrument as _, debug, info_span, warn};

impl Runner<'_, '_> {
    /// Builds, compresses when due, and streams one answer. `Ok(None)` when cancelled.
    pub(super) async fn model_step(
        &mut self,
        step: &mut Step,
    ) -> Result<Option<Completion>, StepError> {
        let mut overflow_retried = false;
        loop {
            let built = self.build_context().await?;
            let built = self.with_images(built);
            let tools = self.offered_tools();
            let request = chat_request(&self.link.config, &built, &tools, self.conversation.id);
            let estimate = self.estimate(&built);
            let needed = self.counting.calibration.apply(estimate);
            let too_big = built.compression_required() || needed > built.budgeting.input_room;
            let result = if too_big {
                Err(LlmError::ContextOverflow {
                    provider: self.link.config.name.clone(),
                    message: format!(
                        "the request needs about {needed} tokens and {} are available",
                        built.budgeting.input_room
                    ),
                }
                .into())
            } else {
                let asked = Instant::now();
                // One span per request sent: an overflow retried within the step is a second.
                let span = info_span!(
                    "model.call",
                    model = %self.link.config.model,
                    estimate = needed,
                    overflow_retry = overflow_retried,
                );
                step.output_cap = request.max_tokens;
                let result = stream_answer(
                    &self.link.provider,
                    request,
                    self.session.events,
                    &self.session.cancel,
                )
                .instrument(span)
                .await;
                step.model_wait += asked.elapsed();
                result
            };
            match result {
                Ok(completion) if completion.finish == Some(FinishReason::Stopped) => {
                    // Stopped while it streamed: what arrived is kept, marked as stopped.
                    self.store_stopped(step, completion).await?;
                    return Ok(None);
                }
                Ok(completion) => {
                    self.answered(step, &completion, estimate).await?;
                    return Ok(Some(self.calls_from_text(step, completion, &tools)));
                }
                Err(RuntimeError::Llm(e))
                    if e.class() == FailureClass::ContextOverflow && !overflow_retried =>
                {
                    // Compress deeply and try once more; when the server refused it, first
                    // fit to the window the server says it serves.
                    overflow_retried = true;
                    if !too_big {
                        self.refit_after_refusal(&e).await?;
                    }
                    warn!("context overflow; compressing deeply and retrying once");
                    let built = self.build_context().await?;
                    compress_at(
                        &self.compress_ctx(),
                        &built,
                        CompressionLevel::Deep,
                        CompactionTrigger::Overflow,
                    )
                    .await?;
                }
                Err(RuntimeError::Llm(e)) => {
                    return Err(StepError::Failed(Pending {
                        class: e.class(),
                        trigger: Trigger::ModelRequest,
                        message: e.to_string(),
                        call: None,
                        todo: None,
                    }));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// An answer that came back with no tool call although tools were offered, but whose text
    /// holds a call in a form a local server's template parser missed (Hermes' `<tool_call>`,
    /// a bare JSON object, Llama 3's and Mistral's forms): the calls are read from the text,
    /// and the step's record says so. Anything else passes unchanged.
    fn calls_from_text(
        &self,
        step: &mut Step,
        mut completion: Completion,
        tools: &[decima_llm::ToolSpec],
    ) -> Completion {
        if tools.is_empty() || !completion.tool_calls.is_empty() || completion.is_cut_off() {
            return completion;
        }
        let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let Some(recovered) = decima_llm::recover_text_tool_calls(&completion.text, &offered)
        else {
            return completion;
        };
        warn!(
            form = recovered.form.as_str(),
            calls = recovered.calls.len(),
            "the server left tool calls in the text; read them from it"
        );
        completion.text = recovered.remaining_text;
        // The same text in two steps would give the same ids: each step's are its own.
        let number = self.steps_taken + 1;
        completion.tool_calls = recovered
            .calls
            .into_iter()
            .map(|mut call| {
                call.id = format!("{}_step{number}", call.id);
                call
            })
            .collect();
        if completion.finish == Some(FinishReason::Stop) {
            completion.finish = Some(FinishReason::ToolCalls);
        }
        step.calls_from_text = Some(recovered.form);
        completion
    }

    /// Books an answered call: its usage and cost in the run's history, a prompt the server
    /// cut (which refits the window and is not learned from), and the calibration.
    async fn answered(
        &mut self,
        step: &mut Step,
        completion: &Completion,
        estimate: u32,
    ) -> Result<()> {
        // The run history's cost: every answered call, with what the provider said it carried
        // and, at the provider's prices now, what it cost.
        let usage = completion.usage.map(crate::answer::call_usage);
        let cost = usage
            .zip(self.link.prices)
            .map(|(u, prices)| crate::answer::cost_microdollars(&u, &prices));
        self.store()
            .executions()
            .add_model_call(self.execution.id, usage, cost)
            .await?;
        // A server that counted far fewer prompt tokens than were sent dropped part of the
        // prompt: the answer is marked, and the count is not learned from.
        step.prompt_truncated = completion.usage.is_some_and(|u| {
            self.counting
                .calibration
                .looks_truncated(estimate, u.prompt_tokens)
        });
        if step.prompt_truncated
            && let Some(served) =
                crate::served_window::after_truncation(self.store(), &self.link.config).await?
        {
            self.fit_to(served)?;
        }
        if let Some(usage) = completion.usage
            && !step.prompt_truncated
        {
            self.counting
                .calibration
                .update(estimate, usage.prompt_tokens);
            // Saved while it is still learning, then every few samples: a crash loses at most
            // a few samples of a running average.
            if self.counting.calibration.samples <= CALIBRATION_WARMUP
                || self
                    .counting
                    .calibration
                    .samples
                    .is_multiple_of(CALIBRATION_SAVE_EVERY)
            {
                self.store()
                    .calibrations()
                    .save(
                        &self.link.config.model,
                        self.counting.calibration.factor,
                        self.counting.calibration.samples,
                    )
                    .await?;
            }
        }
        self.carried.instant_context = None;
        Ok(())
    }

    /// Reads the served window again after the server refused a request for its length, and
    /// fits the rest of the run to it: the window, the answer's reserve within it, and the
    /// context read for the next request.
    async fn refit_after_refusal(&mut self, refusal: &LlmError) -> Result<()> {
        let Some(served) =
            crate::served_window::after_refusal(self.store(), &self.link.config, refusal).await?
        else {
            return Ok(());
        };
        self.emit(Event::Warning {
            message: format!(
                "{} refused the request for its length: it serves {} tokens, not {}; the \
                 conversation is compressed to fit and the request sent again",
                self.link.config.name,
                crate::served_window::thousands(served),
                crate::served_window::thousands(self.window.window)
            ),
        });
        self.fit_to(served)
    }

    /// The analyst's `compress` on a request too long for the model: fits the run to the
    /// window the server serves (or `named` in its refusal, when smaller), stored as served,
    /// then compresses the conversation deeply, so the step tried again fits.
    pub(super) async fn compress_to_fit(&mut self, named: Option<u32>) -> Result<()> {
        if let Some(served) =
            crate::served_window::refit(self.store(), &self.link.config, named).await?
        {
            self.fit_to(served)?;
        }
        let built = self.build_context().await?;
        let compressed = compress_at(
            &self.compress_ctx(),
            &built,
            CompressionLevel::Deep,
            CompactionTrigger::Manual,
        )
        .await?;
        if compressed.is_none() {
            // Said, not hidden: the step is tried as it stands.
            self.emit(Event::Warning {
                message: format!(
                    "nothing more of the conversation could be compressed; the step is tried \
                     again within {} tokens",
                    crate::served_window::thousands(self.window.window)
                ),
            });
        }
        self.window_cache.forget();
        Ok(())
    }

    /// Fits the rest of the run to `served` tokens: the window, the answer's reserve within
    /// it, the provider (Ollama is told the window with each request), and the context read
    /// for the next request.
    fn fit_to(&mut self, served: u32) -> Result<()> {
        self.link.config.context_window = served;
        if self.link.config.num_ctx.is_some() {
            self.link.config.num_ctx = Some(served);
            self.link.provider = crate::model_call::connect(&self.link.config)?;
        }
        self.window.output_reserve = self
            .window
            .output_reserve
            .min(crate::settings::default_output_reserve(served));
        self.window.window = served;
        self.window_cache.forget();
        Ok(())
    }

    /// Notes the images of a result the model is shown, for every later request.
    pub(super) fn note_images(&mut self, call: &ToolCall, images: &[decima_core::ImagePart]) {
        let shown: Vec<_> = images.iter().filter(|i| i.tokens > 0).cloned().collect();
        if !shown.is_empty() {
            self.shown_images.insert(call.id.clone(), shown);
        }
    }

    /// The context with each tool result's images attached, where the model is shown them:
    /// the newest [`MAX_SHOWN_IMAGES`], however long the history (Anthropic refuses a request
    /// with more than 100, and holds images to a smaller size once there are more than 20);
    /// older results keep only the text that names their saved files. The stored token counts
    /// hold what every image costs, so the window errs on the safe side.
    fn with_images(&self, mut built: Built) -> Built {
        if self.shown_images.is_empty() {
            return built;
        }
        let mut room = MAX_SHOWN_IMAGES;
        for m in built.assembled.messages.iter_mut().rev() {
            let images = match (&m.message.role, &m.message.tool_call_id) {
                (Role::Tool, Some(id)) if m.message.images.is_empty() => self.shown_images.get(id),
                _ => None,
            };
            let Some(images) = images else { continue };
            let taken = images.len().min(room);
            if taken == 0 {
                break;
            }
            room -= taken;
            let mut shown = (*m.message).clone();
            // The result's last images, if only some fit: nearest the end, as the rest is.
            shown.images = images[images.len() - taken..].to_vec();
            m.message = Arc::new(shown);
        }
        built
    }

    /// Reports what the step cost, apart from the model and the tools it waited on.
    pub(super) fn step_timed(&self, step: &Step) {
        let total = step.elapsed();
        let own = total
            .saturating_sub(step.model_wait)
            .saturating_sub(step.tools_wait);
        let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        debug!(
            step = self.steps_taken,
            total_us = us(total),
            model_us = us(step.model_wait),
            tools_us = us(step.tools_wait),
            "step timed"
        );
        self.emit(Event::StepTimed {
            step: self.steps_taken,
            total_us: us(total),
            model_us: us(step.model_wait),
            tools_us: us(step.tools_wait),
            overhead_us: us(own),
        });
    }

    pub(super) fn compress_ctx(&self) -> CompressContext<'_> {
        CompressContext {
            store: self.store(),
            data_dir: self.session.data_dir,
            conversation: &self.conversation,
            preset: &self.preset,
            window: &self.window,
            scale: self.counting.scale,
            provider: self.options.provider.as_deref(),
            events: self.session.events,
        }
    }

    /// What the conversation's Python kernel holds, when this run has one: a list the model
    /// reads in the request's volatile tail. A kernel that cannot be asked is left out
    /// (logged): the request goes on without the list.
    async fn kernel_memory(&self) -> Option<String> {
        if !self
            .tools
            .iter()
            .any(|t| t.name == decima_sandbox::host::tools::PYTHON)
        {
            return None;
        }
        let kernel = self.execution.conversation_id.to_string();
        match self.registry.sandbox().python_variables(kernel).await {
            Ok(Some(variables)) => Some(crate::python_tool::memory_note(&variables)),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e.message, "the Python kernel's variables were not listed");
                None
            }
        }
    }

    /// The context of the next request, compressed first when a threshold is crossed: the
    /// check runs between model calls, not only when a run starts. What was read for the last
    /// step is kept and brought up to date with the messages stored since, so a step does not
    /// read its window from the store again.
    pub(super) async fn build_context(&mut self) -> Result<Built> {
        let mut instant = self.carried.instant_context.clone().unwrap_or_default();
        if let Some(memory) = self.kernel_memory().await {
            if !instant.is_empty() {
                instant.push_str("\n\n");
            }
            instant.push_str(&memory);
        }
        let store = self.session.store;
        let own = self.window_cache.take_stored();
        let mut cached = match self.window_cache.cached.take() {
            Some(mut cached) => {
                if cached.loaded.refresh(store, own).await? {
                    cached
                } else {
                    self.load_context().await?
                }
            }
            None => self.load_context().await?,
        };
        let history = self.step_history(&cached.loaded);
        let extras = Extras {
            session: &history,
            instant: &instant,
        };
        let counter = self.counting.paragraphs.over(&cached.memo);
        let mut built = cached.loaded.assemble(
            &self.preset,
            &self.window,
            self.counting.scale,
            extras,
            &counter,
        )?;
        if compress_built(&self.compress_ctx(), &built, CompactionTrigger::Auto)
            .await?
            .is_some()
        {
            cached = self.load_context().await?;
            let history = self.step_history(&cached.loaded);
            let extras = Extras {
                session: &history,
                instant: &instant,
            };
            let counter = self.counting.paragraphs.over(&cached.memo);
            built = cached.loaded.assemble(
                &self.preset,
                &self.window,
                self.counting.scale,
                extras,
                &counter,
            )?;
        }
        self.window_cache.cached = Some(cached);
        self.emit(Event::ContextUsage {
            usage: built.report.usage,
            used: built.report.total,
            input_room: built.budgeting.input_room,
            layers: built
                .report
                .layers
                .iter()
                .map(|l| LayerUsage {
                    name: l.name.clone(),
                    tokens: l.tokens,
                })
                .collect(),
        });
        Ok(built)
    }

    /// The step history for a request built from `loaded`: only the steps whose answers have
    /// left the window (compressed, or older than the loaded tail). A step this runner did not
    /// see answered (a resumed run's earlier steps) counts as left.
    fn step_history(&mut self, loaded: &Loaded) -> String {
        let first_verbatim = loaded.first_verbatim_seq();
        let answers = &self.step_answers;
        self.history.history_left(
            STEP_SUMMARY_TOKENS,
            self.counting.model_memo.counter(),
            |step| answers.get(&step).is_none_or(|&seq| seq < first_verbatim),
        )
    }

    pub(super) async fn load_context(&self) -> Result<CachedContext> {
        let store = self.store();
        let memo = MemoCounter::load(
            store,
            self.conversation.id,
            decima_llm::tokens::store_counter(),
        )
        .await?;
        let loaded = Loaded::load(
            store,
            &self.conversation,
            &self.preset,
            &self.window,
            self.counting.scale,
            &memo,
        )
        .await?;
        Ok(CachedContext { loaded, memo })
    }

    /// The model's estimate of a request: the tools and reply priming counted once per run,
    /// each message once (remembered across steps).
    pub(super) fn estimate(&self, built: &Built) -> u32 {
        self.counting
            .model_memo
            .count_request(built.assembled.messages.iter().map(|m| &m.message))
            .saturating_add(self.counting.request_base)
            .saturating_add(self.loaded_tokens())
    }
}
