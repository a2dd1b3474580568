//! External engines: any UCI or UCCI Xiangqi engine executable as a player.
//!
//! - [`protocol`]: the commands sent and the replies read;
//! - [`dialect`]: how an engine numbers ranks, translated on every line;
//! - [`process`]: a running engine with deadlines, crash and hang handling.

pub mod dialect;
pub mod process;
pub mod protocol;

pub use dialect::{Coords, Dialect, DialectMismatch};
pub use process::{EngineConfig, EngineFailure, ExternalEngine, Reply, Session, Timeouts};
pub use protocol::{Go, Info, Protocol, ProtocolText, TimeUnit};
