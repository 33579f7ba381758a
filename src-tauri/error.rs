//! The one error type the webview sees.

use decima_core::CoreError;
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
}

impl AppError {
    fn new(code: ErrorCode, message: impl ToString) -> Self {
        Self {
            code,
            message: message.to_string(),
        }
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
                Self::new(ErrorCode::Storage, e)
            }
            RuntimeError::Workspace(e) => {
                let code = match e.class {
                    decima_core::FailureClass::System | decima_core::FailureClass::Transient => {
                        ErrorCode::Storage
                    }
                    _ => ErrorCode::InvalidInput,
                };
                Self::new(code, e.message)
            }
            e @ (RuntimeError::Busy(_) | RuntimeError::Conflict(_)) => {
                Self::new(ErrorCode::Conflict, e)
            }
            e @ (RuntimeError::Llm(_)
            | RuntimeError::EmptyAnswer { .. }
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
