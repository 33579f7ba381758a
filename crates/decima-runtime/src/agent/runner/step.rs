//! What lives for one step: made when the step starts and dropped when it ends, so nothing of
//! one step's model call or calls can reach the next one by a reset forgotten.

use std::time::{Duration, Instant};

use decima_llm::TextCallForm;

/// One step's own state, passed down to what the step does.
#[derive(Debug)]
pub(super) struct Step {
    /// When it started.
    started: Instant,
    /// Time spent waiting for the model's answer.
    pub(super) model_wait: Duration,
    /// Time spent running tools.
    pub(super) tools_wait: Duration,
    /// The output cap its request carried, for what a cut answer says.
    pub(super) output_cap: Option<u32>,
    /// The server counted far fewer prompt tokens for its request than were sent.
    pub(super) prompt_truncated: bool,
    /// The written form of its answer's calls, when they were read from the answer's text.
    pub(super) calls_from_text: Option<TextCallForm>,
    /// The call whose `tool.started` marker was written with the answer that made it.
    pub(super) started_marker_call: Option<String>,
}

impl Step {
    /// A step starting now.
    pub(super) fn start() -> Self {
        Self {
            started: Instant::now(),
            model_wait: Duration::ZERO,
            tools_wait: Duration::ZERO,
            output_cap: None,
            prompt_truncated: false,
            calls_from_text: None,
            started_marker_call: None,
        }
    }

    /// Wall time since it started.
    pub(super) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether `call`'s `tool.started` marker went to the store with the answer; true once.
    pub(super) fn marked_with_answer(&mut self, call: &str) -> bool {
        self.started_marker_call.take().as_deref() == Some(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_starts_with_nothing_of_another_and_its_marker_is_used_once() {
        let mut step = Step::start();
        assert_eq!(step.model_wait + step.tools_wait, Duration::ZERO);
        assert!(!step.prompt_truncated && step.calls_from_text.is_none());
        assert!(!step.marked_with_answer("call_1"));
        step.started_marker_call = Some("call_1".into());
        assert!(
            !step.marked_with_answer("call_2"),
            "another call is not the marked one"
        );
        step.started_marker_call = Some("call_1".into());
        assert!(step.marked_with_answer("call_1"));
        assert!(
            !step.marked_with_answer("call_1"),
            "the marker covers one start"
        );
    }
}
