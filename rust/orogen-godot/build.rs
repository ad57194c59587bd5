//! Link the extension with `-z nodelete`: Godot unloads extension libraries before its last
//! objects and thread-local destructors are gone at exit, and a call into an unmapped
//! library crashes the engine on quit. Keeping the code mapped makes those late calls safe.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os == "freebsd" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
}
