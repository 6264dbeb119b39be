//! Proofs that this CPU has a SIMD feature, and the kernel a configuration
//! resolves to.
//!
//! A token ([`Avx2Token`], [`Sse41Token`], [`Avx2PopcntToken`]) is a
//! zero-sized value that can only be had where its features were detected:
//! its field is private to this module, which makes one only after
//! detection (`Avx2Token::detect`, then `with_popcnt` for POPCNT; SSE4.1
//! comes with AVX2, which implies it). Every
//! `#[target_feature]` function of the grid takes its token as a
//! parameter, so it cannot be called without one, and the `// SAFETY:` of
//! each call is that the token proves the CPU check passed.
//!
//! [`PairKernel`] stays the user's request; [`Kernel`] is what runs,
//! resolved once per grid (or per call of the public parts), holding the
//! token of its SIMD variant.

use super::config::PairKernel;

/// Proof that this CPU has AVX2.
#[cfg(simd)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2Token(());

#[cfg(simd)]
impl Avx2Token {
    /// The token, if this CPU has AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Self(()))
    }

    /// SSE4.1: Rust's `avx2` target feature implies it (through AVX and
    /// SSE4.2), so code compiled for AVX2 may already use it.
    #[inline(always)]
    pub(crate) fn sse41(self) -> Sse41Token {
        Sse41Token(())
    }

    /// AVX2 and POPCNT, if this CPU also has POPCNT.
    #[inline]
    pub(crate) fn with_popcnt(self) -> Option<Avx2PopcntToken> {
        std::arch::is_x86_feature_detected!("popcnt").then_some(Avx2PopcntToken(()))
    }
}

/// Proof that this CPU has SSE4.1 (the split's cell codes).
#[cfg(simd)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sse41Token(());

/// Proof that this CPU has AVX2 and POPCNT (the hierarchy walks, whose child
/// indices are population counts).
#[cfg(simd)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2PopcntToken(());

/// The leaf kernel that runs: a [`PairKernel`] resolved on this CPU, the
/// SIMD variant holding the proof of its features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Plain Rust, no intrinsics.
    Scalar,
    /// AVX2, detected.
    #[cfg(simd)]
    Avx2(Avx2Token),
}

impl Kernel {
    /// What runs for `request`: `Auto` and `Avx2` become AVX2 where this
    /// build and CPU have it, everything else the portable kernel.
    #[inline]
    pub(crate) fn resolve(request: PairKernel) -> Self {
        match request {
            PairKernel::Scalar => Kernel::Scalar,
            #[cfg(simd)]
            PairKernel::Auto | PairKernel::Avx2 => {
                Avx2Token::detect().map_or(Kernel::Scalar, Kernel::Avx2)
            }
            #[cfg(not(simd))]
            PairKernel::Auto | PairKernel::Avx2 => Kernel::Scalar,
        }
    }

    /// The public name of the kernel (never `Auto`).
    #[inline]
    pub(crate) fn name(self) -> PairKernel {
        match self {
            Kernel::Scalar => PairKernel::Scalar,
            #[cfg(simd)]
            Kernel::Avx2(_) => PairKernel::Avx2,
        }
    }

    /// The AVX2 token, if AVX2 runs.
    #[cfg(simd)]
    #[inline(always)]
    pub(crate) fn avx2(self) -> Option<Avx2Token> {
        match self {
            Kernel::Avx2(token) => Some(token),
            Kernel::Scalar => None,
        }
    }

    /// The AVX2 and POPCNT token of the hierarchy walks, if AVX2 runs and the
    /// CPU has POPCNT.
    #[cfg(simd)]
    #[inline]
    pub(crate) fn avx2_popcnt(self) -> Option<Avx2PopcntToken> {
        self.avx2().and_then(Avx2Token::with_popcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token is had exactly where the CPU check passes.
    #[test]
    #[cfg(simd)]
    fn tokens_agree_with_detection() {
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        let popcnt = std::arch::is_x86_feature_detected!("popcnt");
        assert_eq!(Avx2Token::detect().is_some(), avx2);
        assert_eq!(Avx2Token::detect().and_then(Avx2Token::with_popcnt).is_some(), avx2 && popcnt);
        if Avx2Token::detect().is_some() {
            // The implication the SSE4.1 token rests on.
            assert!(std::arch::is_x86_feature_detected!("sse4.1"));
        }
        assert_eq!(Kernel::resolve(PairKernel::Avx2).avx2().is_some(), avx2);
        assert_eq!(Kernel::resolve(PairKernel::Auto).avx2_popcnt().is_some(), avx2 && popcnt);
    }

    /// The SIMD kernel is what `Avx2` resolves to only where AVX2 runs,
    /// and the portable kernel holds no token.
    #[test]
    fn avx2_without_the_cpu_or_the_build_resolves_to_scalar() {
        #[cfg(simd)]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(simd))]
        let avx2 = false;
        let expected = if avx2 { PairKernel::Avx2 } else { PairKernel::Scalar };
        for request in [PairKernel::Auto, PairKernel::Avx2] {
            assert_eq!(Kernel::resolve(request).name(), expected);
            assert_eq!(request.resolve(), expected);
        }
        assert_eq!(PairKernel::Avx2.is_supported(), avx2);
        assert_eq!(Kernel::resolve(PairKernel::Scalar), Kernel::Scalar);
        #[cfg(simd)]
        assert_eq!(Kernel::Scalar.avx2(), None);
    }
}
