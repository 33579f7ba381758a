// The migrations are embedded by `sqlx::migrate!`; rebuild when any of them changes.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
