//! Reference oracles (being written).
