//! Hand-made positions for the arbiter.
