//! What the bridge answers, as Decima reads it.

use std::time::Duration;

use decima_core::FailureClass;
use serde::Deserialize;

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PythonStatus {
    /// It ran to its end.
    Ok,
    /// It raised.
    Error,
    /// It ran past its timeout and was interrupted (and the kernel restarted if it did not stop).
    Timeout,
    /// The run was cancelled and the kernel interrupted.
    Interrupted,
    /// The kernel died (a crash, or the container's memory limit) and was started again.
    Died,
    /// The bridge itself failed to run the request.
    Bridge,
    /// The bridge did not know the request.
    Refused,
}

/// The exception a cell raised.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct KernelFault {
    /// Its class name: `KeyError`, `FileNotFoundError`.
    pub ename: String,
    /// Its message.
    pub evalue: String,
    /// The traceback's lines, colours taken out.
    #[serde(default)]
    pub traceback: Vec<String>,
}

impl KernelFault {
    /// The failure class recovery keys on: a missing file, column or key, or a value of the
    /// wrong shape is the data's; a name, a type or syntax is the code's; a refused path is a
    /// permission; memory and the system are the machine's.
    #[must_use]
    pub fn class(&self) -> FailureClass {
        match self.ename.as_str() {
            "FileNotFoundError"
            | "KeyError"
            | "IndexError"
            | "ValueError"
            | "EmptyDataError"
            | "ParserError"
            | "UnicodeDecodeError"
            | "ZeroDivisionError"
            | "OverflowError"
            | "LookupError"
            | "MergeError"
            | "OutOfBoundsDatetime"
            | "DtypeWarning" => FailureClass::Data,
            "PermissionError" => FailureClass::Permission,
            "MemoryError" | "OSError" | "SystemError" | "RecursionError" => FailureClass::System,
            "TimeoutError" | "ConnectionError" | "KeyboardInterrupt" => FailureClass::Transient,
            _ => FailureClass::Logic,
        }
    }
}

/// What one `python` call gave.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PythonOutcome {
    /// How it ended.
    pub status: PythonStatus,
    /// What it printed (the first MiB).
    #[serde(default)]
    pub stdout: String,
    /// What it wrote to stderr (the first MiB).
    #[serde(default)]
    pub stderr: String,
    /// The value of its last expression, as IPython shows it.
    #[serde(default)]
    pub result: Option<String>,
    /// HTML it displayed: a data frame's table.
    #[serde(default)]
    pub html: Vec<String>,
    /// The charts it drew, saved in the workspace (workspace-relative).
    #[serde(default)]
    pub charts: Vec<String>,
    /// The exception it raised.
    #[serde(default)]
    pub error: Option<KernelFault>,
    /// The kernel was started again during the call: every variable is gone.
    #[serde(default)]
    pub restarted: bool,
    /// The kernel's own time, from the request to its idle state.
    #[serde(default, rename = "elapsed_ms", deserialize_with = "millis")]
    pub elapsed: Duration,
    /// This call started a kernel: nothing from earlier calls is in memory.
    #[serde(skip)]
    pub fresh_kernel: bool,
}

fn millis<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_millis(u64::deserialize(d)?))
}

impl PythonOutcome {
    /// The failure class of a call that failed; `None` when it ran to its end.
    #[must_use]
    pub fn failure_class(&self) -> Option<FailureClass> {
        match self.status {
            PythonStatus::Ok => None,
            PythonStatus::Error => Some(
                self.error
                    .as_ref()
                    .map_or(FailureClass::Logic, KernelFault::class),
            ),
            // The model is told and goes on: a cell cut short, or a kernel that died (and was
            // started again, which the text says) is worth another try, not the analyst's time.
            PythonStatus::Timeout | PythonStatus::Interrupted | PythonStatus::Died => {
                Some(FailureClass::Transient)
            }
            PythonStatus::Bridge => Some(FailureClass::System),
            PythonStatus::Refused => Some(FailureClass::Logic),
        }
    }
}

/// A variable in the kernel's memory, as the context lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its type: `int`, `pandas.DataFrame`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// A data frame's or an array's shape, or a collection's length as one dimension.
    #[serde(default, deserialize_with = "shape")]
    pub shape: Option<Vec<u64>>,
}

fn shape<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u64>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        Dims(Vec<Option<u64>>),
        Len(u64),
    }
    Ok(match Option::<Shape>::deserialize(d)? {
        None => None,
        Some(Shape::Len(n)) => Some(vec![n]),
        // A dimension that is not a number (a symbolic shape) is left out with its shape.
        Some(Shape::Dims(dims)) => dims.into_iter().collect(),
    })
}

impl Variable {
    /// "df: pandas.DataFrame (1200 × 8)".
    #[must_use]
    pub fn line(&self) -> String {
        match &self.shape {
            Some(dims) if !dims.is_empty() => {
                let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
                format!("{}: {} ({})", self.name, self.type_name, dims.join(" × "))
            }
            _ => format!("{}: {}", self.name, self.type_name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_read_with_its_error_and_its_class() {
        let r: PythonOutcome = serde_json::from_str(
            r#"{"id": 3, "status": "error", "stdout": "", "stderr": "", "result": null,
                "html": [], "charts": [], "error": {"ename": "KeyError", "evalue": "'q4'",
                "traceback": ["KeyError: 'q4'"]}, "restarted": false, "elapsed_ms": 12}"#,
        )
        .unwrap();
        assert_eq!(r.status, PythonStatus::Error);
        assert_eq!(r.failure_class(), Some(FailureClass::Data));
        assert_eq!(r.elapsed, Duration::from_millis(12));
        let r: PythonOutcome = serde_json::from_str(
            r#"{"status": "error", "error": {"ename": "NameError", "evalue": "x"}}"#,
        )
        .unwrap();
        assert_eq!(r.failure_class(), Some(FailureClass::Logic));
        let r: PythonOutcome =
            serde_json::from_str(r#"{"status": "died", "restarted": true}"#).unwrap();
        assert_eq!(r.failure_class(), Some(FailureClass::Transient));
    }

    #[test]
    fn a_variable_reads_as_its_name_type_and_shape() {
        let v: Vec<Variable> = serde_json::from_str(
            r#"[{"name": "df", "type": "pandas.DataFrame", "shape": [1200, 8]},
                {"name": "x", "type": "int", "shape": null},
                {"name": "names", "type": "list", "shape": 3},
                {"name": "t", "type": "torch.Tensor", "shape": [null, 4]}]"#,
        )
        .unwrap();
        let lines: Vec<String> = v.iter().map(Variable::line).collect();
        assert_eq!(
            lines,
            [
                "df: pandas.DataFrame (1200 × 8)",
                "x: int",
                "names: list (3)",
                "t: torch.Tensor"
            ]
        );
    }
}
