//! Stamps the binary with the commit it was built from and the day it was built, for
//! `decima --version`: a bug report then says exactly which code it is about.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let build = vergen_gitcl::Build::builder().build_date(true).build();
    let git = vergen_gitcl::Gitcl::builder().sha(true).build();
    vergen_gitcl::Emitter::default()
        .add_instructions(&build)?
        .add_instructions(&git)?
        .emit()?;
    Ok(())
}
