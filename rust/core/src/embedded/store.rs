//! Durable storage of `embedded:<dir>`: the directory lock, the catalog file and one
//! append-only file per table bucket.
//!
//! # Directory layout
//!
//! ```text
//! <dir>/LOCK                       held with an exclusive flock while an engine has the dir open
//! <dir>/catalog.json               databases, tables, id counters (replaced atomically)
//! <dir>/tables/<table_id>/<b>.log  bucket b of that table: framed log batches
//! <dir>/tables/<table_id>/p<partition_id>/<b>.log   bucket b of a partition of that table
//! ```
//!
//! # Catalog
//!
//! `catalog.json` is rewritten whole on every DDL and every `InitWriter`: written to
//! `catalog.json.tmp`, fsynced, renamed over `catalog.json`, then the directory is fsynced
//! (fsyncs only under [`FsyncPolicy::Always`]). A reader therefore sees the old or the new file,
//! never a mix. See `catalog.rs` for its JSON fields.
//!
//! # Bucket files
//!
//! A bucket file starts with the 8-byte magic `FLWEMB01` and then holds frames, back to back:
//!
//! ```text
//! u32 LE  payload length
//! u32 LE  CRC-32C of (kind byte + payload)
//! u8      kind (1 = log batch)
//! [u8]    payload
//! ```
//!
//! Kind 1 is one accepted log batch exactly as a fetch returns it: a Fluss V0 log batch with its
//! assigned base offset and commit timestamp. For a log table these are the produced batches;
//! for a primary-key table they are the changelog batches the engine generated from `PutKv`
//! (which carry the writer id and batch sequence of the KV batch that caused them, as in Fluss).
//! Everything else is rebuilt from them on open: offsets, the high watermark, the writer
//! (idempotence) state, and for primary-key tables the key-value state (+I/+U put the row, -D
//! removes it), which is how Fluss itself recovers a KV tablet from its changelog.
//!
//! On open a bucket file is read to its end; the first frame that is incomplete or fails its CRC
//! ends the file: it and everything after it are cut off (a torn tail from a killed process).
//! Unknown kinds are an error, so an older build never silently drops data of a newer one.
//!
//! # When data is durable
//!
//! A write is acknowledged only after its frame was handed to the kernel with `write(2)`, so a
//! killed process loses nothing acknowledged. Under [`FsyncPolicy::Always`] (the default,
//! `embedded.fsync = always`) the file is also `fdatasync`ed before the answer, so a machine
//! crash or power loss loses nothing acknowledged either; new files and directories are fsynced
//! along with their parent directory. Under `never` no fsync happens (faster, survives only a
//! killed process). `close()` fsyncs every bucket file under both policies.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::FsyncPolicy;
use crate::error::{ClientCode, Error, Result};
use crate::wire::crc::crc32c;

/// Magic at the start of every bucket file (format version 1).
pub(crate) const BUCKET_MAGIC: &[u8; 8] = b"FLWEMB01";
/// Frame kind of an accepted log batch.
pub(crate) const KIND_LOG_BATCH: u8 = 1;
const FRAME_HEADER: usize = 9;

fn io_err(what: impl std::fmt::Display, e: io::Error) -> Error {
    Error::client(ClientCode::Io, format!("{what}: {e}"))
}

/// An open, locked engine directory.
pub(crate) struct Store {
    dir: PathBuf,
    fsync: FsyncPolicy,
    lock: Mutex<Option<File>>,
}

impl Store {
    /// Create (if needed) and lock `dir`. Fails with an `IO` error if another engine, in this
    /// process or another, holds it.
    pub(crate) fn open(dir: &Path, fsync: FsyncPolicy) -> Result<Store> {
        fs::create_dir_all(dir.join("tables")).map_err(|e| io_err(format!("cannot create {}", dir.display()), e))?;
        let lock_path = dir.join("LOCK");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_err(format!("cannot open {}", lock_path.display()), e))?;
        // `File::try_lock` (flock) is why the workspace requires Rust 1.89.
        let locked = lock.try_lock();
        match locked {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::client(
                    ClientCode::Io,
                    format!("embedded directory {} is locked by another engine (another process or connection has it open)", dir.display()),
                ))
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err(format!("cannot lock {}", lock_path.display()), e)),
        }
        fork_guard::register(&lock);
        let store = Store { dir: dir.to_path_buf(), fsync, lock: Mutex::new(Some(lock)) };
        store.sync_dir(dir)?;
        Ok(store)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        if self.fsync == FsyncPolicy::Always {
            File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_err(format!("cannot fsync {}", dir.display()), e))?;
        }
        Ok(())
    }

    /// The catalog bytes, or `None` for a fresh directory.
    pub(crate) fn read_catalog(&self) -> Result<Option<Vec<u8>>> {
        let path = self.dir.join("catalog.json");
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(format!("cannot read {}", path.display()), e)),
        }
    }

    /// Replace the catalog atomically (tmp + fsync + rename + dir fsync).
    pub(crate) fn write_catalog(&self, bytes: &[u8]) -> Result<()> {
        let tmp = self.dir.join("catalog.json.tmp");
        let path = self.dir.join("catalog.json");
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            if self.fsync == FsyncPolicy::Always {
                f.sync_all()?;
            }
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| io_err(format!("cannot write {}", path.display()), e))?;
        self.sync_dir(&self.dir)
    }

    /// The directory of a table's buckets, or of one partition's.
    fn table_dir(&self, table_id: i64, partition_id: Option<i64>) -> PathBuf {
        let t = self.dir.join("tables").join(table_id.to_string());
        match partition_id {
            None => t,
            Some(p) => t.join(format!("p{p}")),
        }
    }

    /// Create the (empty) bucket files of a new table or partition.
    pub(crate) fn create_table(&self, table_id: i64, partition_id: Option<i64>, buckets: i32) -> Result<Vec<BucketFile>> {
        let dir = self.table_dir(table_id, partition_id);
        // A leftover from a crash between creating files and writing the catalog.
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| io_err(format!("cannot create {}", dir.display()), e))?;
        let files = (0..buckets).map(|b| self.open_bucket(table_id, partition_id, b).map(|(f, _)| f)).collect::<Result<Vec<_>>>()?;
        self.sync_dir(&dir)?;
        self.sync_dir(dir.parent().expect("under tables/"))?;
        Ok(files)
    }

    /// Remove a dropped table's (or partition's) files. Best effort: the catalog no longer
    /// names it, so a leftover is removed on the next open.
    pub(crate) fn remove_table(&self, table_id: i64, partition_id: Option<i64>) {
        let dir = self.table_dir(table_id, partition_id);
        if let Err(e) = fs::remove_dir_all(&dir) {
            log::warn!("embedded engine: cannot remove {}: {e}", dir.display());
        }
    }

    /// Remove table and partition directories that the catalog does not name (`live`: table id
    /// and its partition ids).
    pub(crate) fn remove_orphans(&self, live: &HashMap<i64, Vec<i64>>) -> Result<()> {
        let tables = self.dir.join("tables");
        let entries = fs::read_dir(&tables).map_err(|e| io_err(format!("cannot list {}", tables.display()), e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(parts) = name.to_str().and_then(|s| s.parse::<i64>().ok()).and_then(|id| live.get(&id)) else {
                log::info!("embedded engine: removing {} (not in the catalog)", entry.path().display());
                let _ = fs::remove_dir_all(entry.path());
                continue;
            };
            for sub in fs::read_dir(entry.path()).into_iter().flatten().flatten() {
                let n = sub.file_name();
                let Some(p) = n.to_str().and_then(|s| s.strip_prefix('p')) else { continue };
                if !p.parse::<i64>().is_ok_and(|id| parts.contains(&id)) {
                    log::info!("embedded engine: removing {} (not in the catalog)", sub.path().display());
                    let _ = fs::remove_dir_all(sub.path());
                }
            }
        }
        Ok(())
    }

    /// Open (creating it if needed) one bucket file and return it with the payloads of its valid
    /// log-batch frames, in order. A torn or corrupt tail is cut off.
    pub(crate) fn open_bucket(&self, table_id: i64, partition_id: Option<i64>, bucket: i32) -> Result<(BucketFile, Vec<Vec<u8>>)> {
        let path = self.table_dir(table_id, partition_id).join(format!("{bucket}.log"));
        let ctx = |e| io_err(format!("bucket file {}", path.display()), e);
        let mut file = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path).map_err(ctx)?;
        let mut data = Vec::new();
        file.read_to_end(&mut data).map_err(ctx)?;
        let mut payloads = Vec::new();
        let mut changed = false;
        let good_len = if data.len() < BUCKET_MAGIC.len() {
            changed = true;
            // New, or torn before the magic was complete: start over.
            file.set_len(0).map_err(ctx)?;
            file.seek(SeekFrom::Start(0)).map_err(ctx)?;
            file.write_all(BUCKET_MAGIC).map_err(ctx)?;
            BUCKET_MAGIC.len()
        } else {
            if &data[..8] != BUCKET_MAGIC {
                return Err(Error::client(ClientCode::Io, format!("{} is not an embedded-engine bucket file (bad magic)", path.display())));
            }
            let mut pos = BUCKET_MAGIC.len();
            loop {
                match parse_frame(&data[pos..]) {
                    Frame::Complete { kind, payload, size } => {
                        if kind != KIND_LOG_BATCH {
                            return Err(Error::client(
                                ClientCode::Io,
                                format!("{}: frame at byte {pos} has unknown kind {kind}", path.display()),
                            ));
                        }
                        payloads.push(payload.to_vec());
                        pos += size;
                    }
                    Frame::End => break,
                    Frame::Torn(why) => {
                        log::warn!(
                            "embedded engine: {}: {why} at byte {pos}; cutting off the last {} bytes (torn tail)",
                            path.display(),
                            data.len() - pos
                        );
                        break;
                    }
                }
            }
            pos
        };
        if good_len < data.len() {
            file.set_len(good_len as u64).map_err(ctx)?;
            changed = true;
        }
        if changed && self.fsync == FsyncPolicy::Always {
            file.sync_all().map_err(ctx)?;
        }
        file.seek(SeekFrom::Start(good_len as u64)).map_err(ctx)?;
        Ok((BucketFile { file, len: good_len as u64, fsync: self.fsync, path }, payloads))
    }

    /// Release the directory lock (on close and on drop). Idempotent.
    ///
    /// The lock is an flock on the LOCK file's open file description, which `fork()` shares with
    /// a child: merely closing our descriptor would leave the directory locked for as long as a
    /// child that inherited it lives. Unlocking explicitly releases it for every holder of the
    /// description at once; and a forked child never keeps a copy (see `fork_guard`).
    pub(crate) fn unlock(&self) {
        let mut lock = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = lock.take() {
            fork_guard::unregister(&file);
            if let Err(e) = file.unlock() {
                log::warn!("cannot unlock {}: {e}", self.dir.join("LOCK").display());
            }
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.unlock();
    }
}

/// Keeps forked children from holding an engine directory's lock.
///
/// A child created by `fork()` inherits every descriptor, including the one that holds the
/// flock of an open `embedded:<dir>`; the lock then stays taken until the child exits, even
/// after the parent closed its engine. In the child, right after the fork, this replaces each
/// registered lock descriptor with `/dev/null` (open, dup2 and close are async-signal-safe), so
/// the child's copy of the descriptor no longer refers to the lock while the child's `File`
/// objects stay valid. The child cannot use the parent's connection anyway (`FORKED_PROCESS`).
#[cfg(unix)]
mod fork_guard {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Once;

    /// Lock descriptors of open engines; -1 = free. More engine directories open at once than
    /// this are still locked correctly, but their locks are not hidden from forked children.
    static FDS: [AtomicI32; 64] = [const { AtomicI32::new(-1) }; 64];
    static INSTALL: Once = Once::new();

    extern "C" fn in_child() {
        const DEV_NULL: &[u8] = b"/dev/null\0";
        for slot in &FDS {
            let fd = slot.load(Ordering::Relaxed);
            if fd < 0 {
                continue;
            }
            // SAFETY: async-signal-safe calls only; `fd` is a descriptor this process owns.
            unsafe {
                let null = libc::open(DEV_NULL.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
                if null >= 0 {
                    libc::dup2(null, fd);
                    libc::close(null);
                }
            }
        }
    }

    pub(super) fn register(file: &File) {
        INSTALL.call_once(|| {
            // SAFETY: registers a handler that only makes async-signal-safe calls.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
            if rc != 0 {
                log::warn!("pthread_atfork failed ({rc}): forked children may keep embedded directories locked");
            }
        });
        let fd = file.as_raw_fd();
        if !FDS.iter().any(|s| s.compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed).is_ok()) {
            log::warn!("more than {} embedded directories open: forked children may keep this one locked", FDS.len());
        }
    }

    pub(super) fn unregister(file: &File) {
        let fd = file.as_raw_fd();
        for s in &FDS {
            let _ = s.compare_exchange(fd, -1, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

#[cfg(not(unix))]
mod fork_guard {
    pub(super) fn register(_: &std::fs::File) {}
    pub(super) fn unregister(_: &std::fs::File) {}
}

enum Frame<'a> {
    Complete { kind: u8, payload: &'a [u8], size: usize },
    End,
    Torn(&'static str),
}

fn parse_frame(buf: &[u8]) -> Frame<'_> {
    if buf.is_empty() {
        return Frame::End;
    }
    if buf.len() < FRAME_HEADER {
        return Frame::Torn("incomplete frame header");
    }
    let len = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
    if buf.len() - FRAME_HEADER < len {
        return Frame::Torn("incomplete frame");
    }
    let body = &buf[8..FRAME_HEADER + len];
    if crc32c(body) != crc {
        return Frame::Torn("frame CRC mismatch");
    }
    Frame::Complete { kind: body[0], payload: &body[1..], size: FRAME_HEADER + len }
}

/// Encode one frame.
pub(crate) fn encode_frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_HEADER + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(kind);
    out.extend_from_slice(payload);
    let crc = crc32c(&out[8..]);
    out[4..8].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The append-only file of one bucket.
pub(crate) struct BucketFile {
    file: File,
    len: u64,
    fsync: FsyncPolicy,
    path: PathBuf,
}

impl BucketFile {
    /// Append one frame: write(2), then fdatasync under `FsyncPolicy::Always`. On failure the
    /// file is cut back to its previous length so that no partial frame stays behind.
    pub(crate) fn append(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let frame = encode_frame(kind, payload);
        let res = self.file.write_all(&frame).and_then(|_| if self.fsync == FsyncPolicy::Always { self.file.sync_data() } else { Ok(()) });
        match res {
            Ok(()) => {
                self.len += frame.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len).and_then(|_| self.file.seek(SeekFrom::Start(self.len)).map(|_| ()));
                Err(e)
            }
        }
    }

    /// fsync the file (close, or policy `never` before release).
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_detect_damage() {
        let f = encode_frame(KIND_LOG_BATCH, b"hello");
        match parse_frame(&f) {
            Frame::Complete { kind, payload, size } => {
                assert_eq!((kind, payload, size), (KIND_LOG_BATCH, &b"hello"[..], f.len()));
            }
            _ => panic!("frame did not parse"),
        }
        assert!(matches!(parse_frame(&f[..f.len() - 1]), Frame::Torn(_)));
        assert!(matches!(parse_frame(&f[..3]), Frame::Torn(_)));
        let mut bad = f.clone();
        bad[10] ^= 1;
        assert!(matches!(parse_frame(&bad), Frame::Torn("frame CRC mismatch")));
        assert!(matches!(parse_frame(&[]), Frame::End));
    }
}
