//! The registry's wire form ([`wire`]): engines, assets and worker
//! releases to and from their messages. The registry itself (uploads,
//! registrations, lists, downloads) is [`crate::service::registry`].

pub mod wire;
