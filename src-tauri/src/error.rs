//! The one error type the webview sees.

use decima_core::{CoreError, FailureClass};
use decima_store::StoreError;
use serde::Serialize;
use specta::Type;

/// A stable, machine-readable reason, so the UI can react without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The conversation or message does not exist (or was deleted).
    NotFound,
    /// The request was refused: a malformed id, an empty title.
    InvalidInput,
    /// The database could not be read or written.
    Storage,
    /// The model provider failed or refused (unreachable, bad key, overloaded).
    Provider,
    /// Someone else holds it: another process runs this execution, or it changed meanwhile.
    Conflict,
    /// The conversation is in use (an active run, a run waiting for a choice, a chat turn or a
    /// compression): nothing was stored. `conversation_busy` says by what.
    Busy,
    /// No model provider is set up: the window says so where it matters, with the way to add
    /// one.
    NoProvider,
    /// Several providers are set up and none is the default: the window asks for a choice.
    NoDefaultProvider,
    /// A bug: something that should not happen.
    Internal,
}

/// Every command's error: a code for the UI's logic and a message for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// One line a person can act on.
    pub message: String,
    /// The failure's class, where the failure has one (a provider's, a tool's, the machine's):
    /// the same classes a run's failures carry, so the window words and offers alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[specta(optional)]
    pub class: Option<FailureClass>,
}

impl AppError {
    fn new(code: ErrorCode, message: impl ToString) -> Self {
        Self {
            code,
            message: message.to_string(),
            class: None,
        }
    }

    fn classed(mut self, class: FailureClass) -> Self {
        self.class = Some(class);
        self
    }

    /// A request the command refuses, with what to do instead.
    pub fn invalid(message: impl ToString) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// No provider to measure or run with (`several`: none of them is the default), in the
    /// window's words.
    pub fn no_provider(several: bool) -> Self {
        if several {
            Self::new(
                ErrorCode::NoDefaultProvider,
                "Several providers are set up and none is the default: choose one in Settings.",
            )
        } else {
            Self::new(
                ErrorCode::NoProvider,
                "No model provider yet: add one in Settings.",
            )
        }
    }

    /// Someone else is doing it already.
    pub fn conflict(message: impl ToString) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// Something that should not happen, said plainly.
    pub fn internal(message: impl ToString) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// Something that is not there (any more).
    pub fn not_found(message: impl ToString) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

impl From<CoreError> for AppError {
    fn from(e: CoreError) -> Self {
        Self::new(ErrorCode::InvalidInput, e)
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        let code = match &e {
            StoreError::NotFound { .. } => ErrorCode::NotFound,
            StoreError::Invalid(_) | StoreError::InvalidInput(_) => ErrorCode::InvalidInput,
            StoreError::Corrupt { .. } => ErrorCode::Internal,
            StoreError::Busy(_) => ErrorCode::Busy,
            StoreError::Conflict(_) => ErrorCode::Conflict,
            _ => ErrorCode::Storage,
        };
        Self::new(code, e)
    }
}

impl From<decima_runtime::RuntimeError> for AppError {
    fn from(e: decima_runtime::RuntimeError) -> Self {
        use decima_runtime::RuntimeError;
        match e {
            RuntimeError::Core(e) => e.into(),
            RuntimeError::Store(e) => e.into(),
            e @ (RuntimeError::Config(_)
            | RuntimeError::Mcp(decima_mcp::McpError::Config(_))
            | RuntimeError::ChoiceNotOffered(_)
            | RuntimeError::ImportLine { .. }) => Self::new(ErrorCode::InvalidInput, e),
            e @ (RuntimeError::Io { .. } | RuntimeError::Sandbox(_) | RuntimeError::Mcp(_)) => {
                Self::new(ErrorCode::Storage, e).classed(FailureClass::System)
            }
            RuntimeError::Workspace(e) => {
                let code = match e.class {
                    decima_core::FailureClass::System | decima_core::FailureClass::Transient => {
                        ErrorCode::Storage
                    }
                    _ => ErrorCode::InvalidInput,
                };
                Self::new(code, e.message).classed(e.class)
            }
            e @ (RuntimeError::Busy(_) | RuntimeError::Conflict(_)) => {
                Self::new(ErrorCode::Conflict, e)
            }
            RuntimeError::Llm(llm) => {
                let class = llm.class();
                Self::new(ErrorCode::Provider, RuntimeError::Llm(llm)).classed(class)
            }
            e @ (RuntimeError::EmptyAnswer { .. }
            | RuntimeError::CutOff { .. }
            | RuntimeError::Review(_)) => Self::new(ErrorCode::Provider, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decima_core::ConversationId;

    #[test]
    fn serialises_to_the_stable_shape_the_ui_reads() {
        let missing = ConversationId::new();
        let err = AppError::from(StoreError::NotFound {
            entity: "conversation",
            id: missing.to_string(),
        });
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["code"], "not_found");
        assert_eq!(
            json["message"],
            format!("conversation {missing} was not found")
        );
        assert_eq!(json.as_object().unwrap().len(), 2);
    }

    #[test]
    fn a_provider_failure_carries_its_class_and_says_it() {
        let refused = decima_llm::LlmError::Connect {
            provider: "local".into(),
            url: "http://127.0.0.1:9/v1".into(),
            detail: "connection refused".into(),
        };
        let err = AppError::from(decima_runtime::RuntimeError::Llm(refused));
        assert_eq!(err.code, ErrorCode::Provider);
        assert_eq!(err.class, Some(FailureClass::Transient));
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["class"], "transient");
        assert!(
            err.message.starts_with("[transient] "),
            "the message still names the class: {}",
            err.message
        );
    }

    #[test]
    fn the_values_the_window_switches_on_cross_as_their_stored_names() {
        use decima_store::{ExecutionStatus, TodoStatus};
        for status in [
            ExecutionStatus::Queued,
            ExecutionStatus::Running,
            ExecutionStatus::AwaitingUser,
            ExecutionStatus::Succeeded,
            ExecutionStatus::Failed,
            ExecutionStatus::Cancelled,
            ExecutionStatus::Interrupted,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        for status in TodoStatus::ALL {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        for class in [
            FailureClass::Transient,
            FailureClass::Data,
            FailureClass::Logic,
            FailureClass::Permission,
            FailureClass::System,
            FailureClass::ContextOverflow,
            FailureClass::Cancelled,
            FailureClass::Degenerate,
            FailureClass::Unlinked,
        ] {
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
        }
    }

    #[test]
    fn maps_each_failure_to_its_code() {
        let hostile = "../etc".parse::<ConversationId>().unwrap_err();
        assert_eq!(AppError::from(hostile).code, ErrorCode::InvalidInput);
        assert_eq!(
            AppError::from(StoreError::InvalidInput("empty".into())).code,
            ErrorCode::InvalidInput
        );
        assert_eq!(
            AppError::from(StoreError::DataDir {
                path: "/x".into(),
                reason: "no".into()
            })
            .code,
            ErrorCode::Storage
        );
    }
}
