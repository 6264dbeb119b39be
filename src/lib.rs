//! broadphase: finds which objects may touch, every frame.
#![doc = include_str!("../README.md")]

pub use broadphase_kernel::*;
pub use glam;
