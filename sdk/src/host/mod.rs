//! The host side of the ABI: lending the session to a library (`session`), running a library's
//! plugin as an engine plugin (`plugin`), and registering a library's plugins (`library`).
//! Loading the library file itself is the caller's job (tephra's adapters use `libloading`).

#[doc(hidden)]
pub mod fuzz_entry;
mod library;
mod plugin;
mod reply;
mod session;

pub use library::{AbiError, PluginLibrary};

#[cfg(test)]
mod tests;
