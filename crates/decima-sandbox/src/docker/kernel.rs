//! The `python` tool in the container: each conversation's kernel, reached through a bridge
//! started as an attached process (see [`crate::kernel`]). The kernel outlives the bridge and
//! this sandbox (it is a process of the container), so a conversation's next run finds its
//! variables; a container that was stopped or recreated starts a fresh one.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::io::AsyncReadExt;

use super::DockerSandbox;
use crate::error::ToolError;
use crate::kernel::{BRIDGE, KernelBridge, PythonOutcome, PythonRequest, Variable};

/// Where kernels keep their connection files and state in the container (its `/tmp`).
const KERNEL_DIR: &str = "/tmp/decima-kernel";

/// What to do when the image has no kernel.
const MISSING: &str = "the sandbox image needs python3 with ipykernel and jupyter-client \
                       (Debian: python3-ipykernel, python3-jupyter-client), as Decima's \
                       analyst image has; rebuild it with `decima sandbox image build`";

/// The bridges this sandbox started, by kernel name (a conversation's id).
#[derive(Default)]
pub(crate) struct Kernels {
    bridges: tokio::sync::Mutex<HashMap<String, Arc<KernelBridge>>>,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels").finish_non_exhaustive()
    }
}

impl DockerSandbox {
    /// Runs one cell in the kernel named `kernel`, starting it (or a bridge to it) first when
    /// none is running.
    pub async fn python_in(
        &self,
        kernel: &str,
        request: &PythonRequest,
    ) -> Result<PythonOutcome, ToolError> {
        let (bridge, fresh) = self.bridge(kernel).await?;
        let outcome = bridge.execute(request).await;
        if bridge.is_dead() {
            self.kernels.bridges.lock().await.remove(kernel);
        }
        let mut outcome = outcome?;
        outcome.fresh_kernel = fresh;
        Ok(outcome)
    }

    /// The variables in kernel `kernel`'s memory; `None` when this sandbox has no bridge to it
    /// (no call has run, so nothing is started to list nothing).
    pub async fn python_variables_in(
        &self,
        kernel: &str,
    ) -> Result<Option<Vec<Variable>>, ToolError> {
        let bridge = self.kernels.bridges.lock().await.get(kernel).cloned();
        match bridge {
            Some(b) if !b.is_dead() => b.variables().await.map(Some),
            _ => Ok(None),
        }
    }

    /// Starts kernel `kernel` again, empty (after a rollback).
    pub async fn restart_python_in(&self, kernel: &str) -> Result<(), ToolError> {
        let (bridge, fresh) = self.bridge(kernel).await?;
        if fresh {
            return Ok(());
        }
        bridge.restart().await
    }

    /// The bridge to kernel `kernel`, and whether its kernel was started just now (rather than
    /// found running with the variables of earlier calls).
    async fn bridge(&self, kernel: &str) -> Result<(Arc<KernelBridge>, bool), ToolError> {
        if kernel.is_empty()
            || !kernel
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(ToolError::system(format!(
                "a kernel's name is letters, digits, '-' and '_': {kernel:?} is not"
            )));
        }
        let mut bridges = self.kernels.bridges.lock().await;
        if let Some(b) = bridges.get(kernel)
            && !b.is_dead()
        {
            return Ok((Arc::clone(b), false));
        }
        let argv = vec![
            "python3".to_owned(),
            "-c".to_owned(),
            BRIDGE.to_owned(),
            kernel.to_owned(),
        ];
        let env = [("DECIMA_KERNEL_DIR".to_owned(), KERNEL_DIR.to_owned())];
        let started = self.start_attached(&argv, &env, None).await?;
        // The bridge's and the kernel's stderr is read and dropped (logged at debug), so that
        // a chatty kernel never fills the pipe and stalls the replies.
        let mut stderr = started.stderr;
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tracing::debug!(bytes = n, "python kernel bridge wrote to stderr");
            }
        });
        let bridge = KernelBridge::start(started.stdin, Box::pin(started.stdout), MISSING).await?;
        let fresh = !bridge.attached();
        let bridge = Arc::new(bridge);
        bridges.insert(kernel.to_owned(), Arc::clone(&bridge));
        Ok((bridge, fresh))
    }
}
