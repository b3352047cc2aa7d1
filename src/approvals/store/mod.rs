//! The gate's SQL, one file a concept: the request record, its decisions,
//! the colleagues who could decide, policies, the job queue, and the
//! timeline with its notices and reminders. Callers name `store::…`; the
//! files are where a reader looks.

mod colleagues;
mod decisions;
mod jobs;
mod notices;
mod policies;
mod requests;

pub use colleagues::*;
pub use decisions::*;
pub use jobs::*;
pub use notices::*;
pub use policies::*;
pub use requests::*;
