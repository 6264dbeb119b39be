//! Scene generators (being written).
