//! The `python` tool's kernel in the analyst's image (`decima sandbox image build`, which
//! scripts/test.sh runs), on a real engine: a kernel outlives the sandbox object that started
//! it, so the next run of a conversation in the same process (the window's) finds its
//! variables, while another conversation's kernel is its own; a cancelled call's kernel is
//! interrupted and keeps its variables; a bad kernel name is refused before anything runs.

use std::time::Duration;

use decima_sandbox::docker::{DockerConfig, DockerSandbox};
use decima_sandbox::kernel::{PythonRequest, PythonStatus};

use crate::common::{cleanup, engine, unique_key};

fn cell(code: &str) -> PythonRequest {
    PythonRequest {
        code: code.to_owned(),
        timeout: Duration::from_secs(60),
        charts: "charts/test".to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_outlives_its_sandbox_and_the_next_run_finds_its_variables() {
    let key = unique_key("kernel");
    let first = DockerSandbox::new(engine().await, DockerConfig::default(), &key).unwrap();
    let _c = cleanup(&first);
    let out = first
        .python_in("conv-a", &cell("rows = 41\nrows + 1"))
        .await
        .unwrap();
    assert!(out.fresh_kernel, "{out:?}");
    assert_eq!(out.result.as_deref(), Some("42"));
    let other = first
        .python_in("conv-b", &cell("'rows' in dir()"))
        .await
        .unwrap();
    assert_eq!(
        other.result.as_deref(),
        Some("False"),
        "a kernel per conversation"
    );
    drop(first);

    // The next run: a new sandbox object on the same container, as the window makes one.
    let next = DockerSandbox::new(engine().await, DockerConfig::default(), &key).unwrap();
    let out = next.python_in("conv-a", &cell("rows")).await.unwrap();
    assert!(!out.fresh_kernel, "{out:?}");
    assert_eq!(out.result.as_deref(), Some("41"));
    let vars = next.python_variables_in("conv-a").await.unwrap().unwrap();
    assert!(
        vars.iter()
            .any(|v| v.name == "rows" && v.type_name == "int"),
        "{vars:?}"
    );

    // A call dropped mid-cell (a cancelled run) interrupts it; the variables stay.
    let sleep = cell("import time\ntime.sleep(60)");
    let slow = next.python_in("conv-a", &sleep);
    assert!(
        tokio::time::timeout(Duration::from_secs(2), slow)
            .await
            .is_err(),
        "the cell is still running"
    );
    let started = std::time::Instant::now();
    let out = next.python_in("conv-a", &cell("rows * 2")).await.unwrap();
    assert_eq!(out.status, PythonStatus::Ok, "{out:?}");
    assert_eq!(out.result.as_deref(), Some("82"));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the dropped cell was interrupted, not waited for: {:?}",
        started.elapsed()
    );

    let refused = next.python_in("../x", &cell("1")).await.unwrap_err();
    assert!(
        refused.message.contains("kernel's name"),
        "{}",
        refused.message
    );
}
