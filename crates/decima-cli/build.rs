//! Stamps the binary with the commit it was built from and the day it was built, for
//! `decima --version`: a bug report then says exactly which code it is about.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let build = vergen_gitcl::Build::builder().build_date(true).build();
    let git = vergen_gitcl::Gitcl::builder().sha(true).build();
    vergen_gitcl::Emitter::default()
        .add_instructions(&build)?
        .add_instructions(&git)?
        .emit()?;
    main_thread_stack_as_on_linux();
    Ok(())
}

/// Windows gives a program's main thread 1 MiB of stack where Linux gives 8 MiB, and the CLI
/// runs all its work on the main thread (a current-thread runtime): a run with a tenth man's
/// review overflowed 1 MiB in a debug build. The same 8 MiB as on Linux, reserved (committed
/// only as it is used).
fn main_thread_stack_as_on_linux() {
    const STACK: u32 = 8 * 1024 * 1024;
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "windows" {
        if env == "msvc" {
            println!("cargo:rustc-link-arg-bins=/STACK:{STACK}");
        } else {
            println!("cargo:rustc-link-arg-bins=-Wl,--stack,{STACK}");
        }
    }
}
