//! The data directory's files: readable and writable by their owner
//! only, and the journal's lock between sandboxes sharing it.

use std::fs::File;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rustix::fs::FlockOperation;

use super::DiskError;

/// Files of the data directory hold client secrets and revealed card
/// numbers: readable and writable by their owner only.
pub(super) const FILE_MODE: u32 = 0o600;
pub(super) const DIR_MODE: u32 = 0o700;

/// Takes or gives back the journal file's lock (`flock(2)`: the whole
/// file, given back by the kernel if the process dies holding it).
pub(super) fn flock(file: &File, operation: FlockOperation) -> Result<(), DiskError> {
    rustix::fs::flock(file, operation).map_err(|e| DiskError::Journal(e.into()))
}

/// Makes `path` readable and writable by its owner only: creates it so
/// when `create` and it is missing, narrows it when it exists.
pub(super) fn owner_only(path: &Path, create: bool) -> std::io::Result<()> {
    if create {
        File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(FILE_MODE)
            .open(path)?;
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(FILE_MODE)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}
