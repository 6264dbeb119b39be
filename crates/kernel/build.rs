//! Names "the x86-64 SIMD kernels are compiled in" once, as `cfg(simd)`:
//! an x86-64 target without the `scalar` feature. The sources say
//! `#[cfg(simd)]` instead of repeating the target and the feature.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(simd)");
    println!("cargo::rerun-if-changed=build.rs");
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "x86_64");
    if x86_64 && std::env::var_os("CARGO_FEATURE_SCALAR").is_none() {
        println!("cargo::rustc-cfg=simd");
    }
}
