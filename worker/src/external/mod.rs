//! External engines: any UCI or UCCI Xiangqi engine executable as a player.
//!
//! - [`protocol`]: the commands sent and the replies read;
//! - [`process`]: a running engine with deadlines, crash and hang handling.

pub mod process;
pub mod protocol;

pub use process::{EngineConfig, EngineFailure, ExternalEngine, Reply, Timeouts};
pub use protocol::{Go, Info, Protocol, ProtocolText};
