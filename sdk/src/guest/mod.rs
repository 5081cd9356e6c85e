//! The library side of the ABI: what `export_plugins!` expands to calls into. Each exported
//! function runs the SDK plugin inside `catch_unwind`, so a panic becomes `PANICKED` with its
//! message instead of unwinding into the host.

mod calls;
mod exports;

pub use exports::Exports;
