//! The scan kernels the brute-force comparisons run (every structure with
//! every kernel of `ScanKernel::available`, scalar twin included) are the
//! ones this machine must exercise: `BROADPHASE_REQUIRE_SIMD`
//! (comma-separated `avx2`, `avx512`; CI sets it from the CPU's flags) names
//! the SIMD paths that must be among them, so a build or a machine that
//! silently compares the scalar kernel with itself fails here.

use crate::support;

use broadphase_neighbors::ScanKernel;

#[test]
fn the_required_simd_kernels_are_tested() {
    let tested = ScanKernel::available();
    eprintln!("scan kernels tested: {tested:?}");
    assert!(tested.contains(&ScanKernel::Scalar));
    for required in broadphase_testkit::required_simd() {
        let kernel = match required.as_str() {
            "avx2" => ScanKernel::Avx2,
            "avx512" => ScanKernel::Avx512,
            other => panic!("BROADPHASE_REQUIRE_SIMD: unknown path {other:?}"),
        };
        assert!(tested.contains(&kernel), "{kernel:?} required, tested {tested:?}");
        let structures = support::all_structures();
        let named = format!("{kernel:?}");
        assert!(
            structures.iter().any(|(name, _)| name.contains(&named)),
            "no structure is compared with the {kernel:?} kernel"
        );
    }
}
