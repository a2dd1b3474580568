//! Variant comparison.
