//! How tiles talk: the [`Comm`] trait (point-to-point messages of bytes between ranks,
//! gather to a root, scatter from it, byte counting), the threaded implementation
//! [`ThreadComm`] that runs every tile of one process on its own thread, and the little-endian
//! message codec ([`Writer`], [`Reader`]). An MPI implementation (rsmpi) implements the same
//! trait: the tile code only sends and receives byte messages by rank and tag.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::error::{OrogenError, Result};
use crate::field::Rect;

/// Point-to-point messages between the ranks of a tiled run (one rank per tile).
///
/// Messages between one pair of ranks with one tag arrive in the order they were sent.
/// Sends never block (buffered), so every exchange pattern that posts its sends before
/// its receives cannot deadlock.
pub trait Comm {
    /// This rank, `0..size`.
    fn rank(&self) -> usize;

    /// Number of ranks.
    fn size(&self) -> usize;

    /// Sends `data` to rank `to` under `tag`.
    fn send(&mut self, to: usize, tag: u32, data: Vec<u8>) -> Result<()>;

    /// The next message from rank `from` under `tag` (waiting for it). Errors when that
    /// rank stopped, or nothing came within the implementation's time limit.
    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>>;

    /// Bytes this rank has sent to other ranks so far.
    fn bytes_sent(&self) -> u64;

    /// Every rank's `data` at `root`, in rank order (an empty list on other ranks).
    fn gather(&mut self, root: usize, tag: u32, data: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        if self.rank() != root {
            self.send(root, tag, data)?;
            return Ok(Vec::new());
        }
        let mut own = Some(data);
        let mut all = Vec::with_capacity(self.size());
        for r in 0..self.size() {
            if r == root {
                all.push(own.take().unwrap_or_default());
            } else {
                all.push(self.recv(r, tag)?);
            }
        }
        Ok(all)
    }

    /// At `root`, `parts[r]` goes to rank `r`; every rank returns its own part (`parts` is
    /// read at the root only, where it must hold one part per rank).
    fn scatter(&mut self, root: usize, tag: u32, parts: Vec<Vec<u8>>) -> Result<Vec<u8>> {
        if self.rank() != root {
            return self.recv(root, tag);
        }
        if parts.len() != self.size() {
            return Err(OrogenError::invalid(
                "tiles.scatter",
                format!("{} parts for {} ranks", parts.len(), self.size()),
            ));
        }
        let mut own = Vec::new();
        for (r, part) in parts.into_iter().enumerate() {
            if r == root {
                own = part;
            } else {
                self.send(r, tag, part)?;
            }
        }
        Ok(own)
    }
}

/// Sends tile `rank`'s cells that other tiles' rectangles grown by `radius` hold, then reads
/// theirs into `values`, laid row-major over this tile's own grown rectangle (see
/// [`TileLayout::extended`](super::TileLayout::extended)): a halo exchange. Only tiles whose
/// cells meet are written to, so the bytes grow with the tile's perimeter.
pub fn exchange_halo<T: Wire>(
    comm: &mut impl Comm,
    layout: &super::TileLayout,
    radius: usize,
    tag: u32,
    values: &mut [T],
) -> Result<()> {
    let held = layout.extended(comm.rank(), radius);
    exchange_halo_in(comm, layout, radius, held, tag, values)
}

/// [`exchange_halo`] of `radius` cells over `values` laid row-major over `held`, a
/// rectangle holding this tile's grown by `radius` (e.g. one grown further, of which only
/// the nearer rings need the neighbours' values); the cells of `held` beyond `radius` are
/// left as they are.
pub fn exchange_halo_in<T: Wire>(
    comm: &mut impl Comm,
    layout: &super::TileLayout,
    radius: usize,
    held: Rect,
    tag: u32,
    values: &mut [T],
) -> Result<()> {
    let rank = comm.rank();
    let (own, mine) = (layout.tile(rank).interior, layout.extended(rank, radius));
    if values.len() != held.len() || mine.intersect(&held) != Some(mine) {
        return Err(OrogenError::invalid(
            format!("tiles rank {rank} halo"),
            format!(
                "{} values for the {}x{} cells at ({}, {}), which must hold the {}x{} at \
                 ({}, {})",
                values.len(),
                held.w,
                held.h,
                held.x0,
                held.y0,
                mine.w,
                mine.h,
                mine.x0,
                mine.y0
            ),
        ));
    }
    for t in (0..layout.count()).filter(|&t| t != rank) {
        if let Some(r) = own.intersect(&layout.extended(t, radius)) {
            let mut w = Writer::with_capacity(std::mem::size_of::<T>() * r.len());
            for y in r.y0..r.y0 + r.h {
                let at = held.index(r.x0, y);
                values[at..at + r.w].iter().for_each(|v| v.put(&mut w));
            }
            comm.send(t, tag, w.into_bytes())?;
        }
    }
    for t in (0..layout.count()).filter(|&t| t != rank) {
        if let Some(r) = layout.tile(t).interior.intersect(&mine) {
            let data = comm.recv(t, tag)?;
            let mut rd = Reader::new(&data, "halo", t);
            for y in r.y0..r.y0 + r.h {
                let at = held.index(r.x0, y);
                for v in &mut values[at..at + r.w] {
                    *v = T::get(&mut rd)?;
                }
            }
            rd.finish()?;
        }
    }
    Ok(())
}

/// One round trip through `root`: every rank sends `up` (tag `tags.0`), the root answers
/// each rank from all of them with `answer` (called on the root only), and every rank gets
/// its answer back (tag `tags.1`).
pub fn through_root(
    comm: &mut impl Comm,
    root: usize,
    tags: (u32, u32),
    up: Vec<u8>,
    answer: impl FnOnce(&[Vec<u8>]) -> Result<Vec<Vec<u8>>>,
) -> Result<Vec<u8>> {
    let all = comm.gather(root, tags.0, up)?;
    let replies = if comm.rank() == root {
        answer(&all)?
    } else {
        Vec::new()
    };
    comm.scatter(root, tags.1, replies)
}

/// The largest of every rank's `value`, on every rank (through `root`).
pub fn all_max(comm: &mut impl Comm, root: usize, tag: u32, value: f32) -> Result<f32> {
    let all = comm.gather(root, tag, value.to_le_bytes().to_vec())?;
    let mut parts = Vec::new();
    if comm.rank() == root {
        let mut max = f32::NEG_INFINITY;
        for (rank, bytes) in all.iter().enumerate() {
            let mut r = Reader::new(bytes, "maximum", rank);
            max = max.max(r.f32()?);
            r.finish()?;
        }
        parts = vec![max.to_le_bytes().to_vec(); comm.size()];
    }
    let back = comm.scatter(root, tag + 1, parts)?;
    let mut r = Reader::new(&back, "maximum", root);
    let max = r.f32()?;
    r.finish()?;
    Ok(max)
}

enum Msg {
    Data {
        from: usize,
        tag: u32,
        data: Vec<u8>,
    },
    Abort {
        from: usize,
        reason: String,
    },
}

/// A [`Comm`] between threads of one process: one unbounded channel per rank.
///
/// A rank whose work fails (or panics) tells every other rank before it goes, so a rank
/// waiting on it returns an error naming it instead of hanging; a receive also gives up
/// after a time limit.
pub struct ThreadComm {
    rank: usize,
    senders: Vec<Sender<Msg>>,
    inbox: Receiver<Msg>,
    pending: VecDeque<(usize, u32, Vec<u8>)>,
    bytes: u64,
    timeout: Duration,
    /// Set once this rank's work ended (well or with its own error already announced).
    done: bool,
    /// The rank whose failure stopped this one, if one did.
    stopped_by: Option<usize>,
}

/// How long a receive waits before it reports the sender as stuck. Every rank that fails
/// says so at once, so this only catches a rank stuck by a bug; it is long because a rank
/// may legitimately work alone for minutes (each rank still computes a big world's start
/// maps whole: a 2049² bake tiled 4×4 on a loaded 2-core machine left rank 1 waiting over
/// 120 s for rank 0's message of tag 20, a thermal halo or the lake labels).
pub const RECV_TIMEOUT: Duration = Duration::from_secs(1800);

impl ThreadComm {
    /// `size` connected ranks.
    pub fn world(size: usize) -> Vec<ThreadComm> {
        let (senders, inboxes): (Vec<_>, Vec<_>) = (0..size).map(|_| channel()).unzip();
        inboxes
            .into_iter()
            .enumerate()
            .map(|(rank, inbox)| ThreadComm {
                rank,
                senders: senders.clone(),
                inbox,
                pending: VecDeque::new(),
                bytes: 0,
                timeout: RECV_TIMEOUT,
                done: false,
                stopped_by: None,
            })
            .collect()
    }

    /// Tells every other rank that this one stopped, with `reason`.
    fn abort(&mut self, reason: &str) {
        self.done = true;
        for (r, s) in self.senders.iter().enumerate() {
            if r != self.rank {
                // A rank that already ended has dropped its inbox: nothing to tell.
                let _ = s.send(Msg::Abort {
                    from: self.rank,
                    reason: reason.to_string(),
                });
            }
        }
    }

    fn stopped(&mut self, from: usize, reason: &str) -> OrogenError {
        self.stopped_by = Some(from);
        OrogenError::invalid(
            format!("tiles rank {}", self.rank),
            format!("stopped because rank {from} stopped: {reason}"),
        )
    }
}

impl Drop for ThreadComm {
    /// A rank dropped before its work ended (a panic) tells the others.
    fn drop(&mut self) {
        if !self.done {
            self.abort("it ended without finishing (a panic)");
        }
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.senders.len()
    }

    fn send(&mut self, to: usize, tag: u32, data: Vec<u8>) -> Result<()> {
        if to >= self.size() {
            return Err(OrogenError::invalid(
                format!("tiles rank {}", self.rank),
                format!("send to rank {to}, but there are {} ranks", self.size()),
            ));
        }
        if to != self.rank {
            self.bytes += data.len() as u64;
        }
        let msg = Msg::Data {
            from: self.rank,
            tag,
            data,
        };
        // A rank that ended dropped its inbox; the receive that needed this will say so.
        let _ = self.senders[to].send(msg);
        Ok(())
    }

    fn recv(&mut self, from: usize, tag: u32) -> Result<Vec<u8>> {
        if let Some(p) = self
            .pending
            .iter()
            .position(|&(f, t, _)| f == from && t == tag)
        {
            return Ok(self
                .pending
                .remove(p)
                .map(|(_, _, d)| d)
                .unwrap_or_default());
        }
        loop {
            match self.inbox.recv_timeout(self.timeout) {
                Ok(Msg::Data {
                    from: f,
                    tag: t,
                    data,
                }) => {
                    if f == from && t == tag {
                        return Ok(data);
                    }
                    self.pending.push_back((f, t, data));
                }
                Ok(Msg::Abort { from: f, reason }) => return Err(self.stopped(f, &reason)),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(OrogenError::invalid(
                        format!("tiles rank {}", self.rank),
                        format!(
                            "no message from rank {from} (tag {tag}) within {} s",
                            self.timeout.as_secs()
                        ),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(OrogenError::invalid(
                        format!("tiles rank {}", self.rank),
                        format!("rank {from} is gone (tag {tag})"),
                    ))
                }
            }
        }
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes
    }
}

/// Runs `work` on `size` ranks, one thread each, connected by [`ThreadComm`]; returns each
/// rank's result in rank order, or the error of the first rank that failed on its own (not
/// one stopped by another's failure).
pub fn run_threads<T: Send>(
    size: usize,
    work: impl Fn(&mut ThreadComm) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let comms = ThreadComm::world(size);
    let results: Vec<(Result<T>, Option<usize>)> = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|mut comm| {
                let work = &work;
                s.spawn(move || {
                    let result = work(&mut comm);
                    match &result {
                        Ok(_) => comm.done = true,
                        Err(e) => comm.abort(&e.to_string()),
                    }
                    (result, comm.stopped_by)
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(rank, h)| {
                h.join().unwrap_or_else(|_| {
                    let e = OrogenError::invalid(
                        format!("tiles rank {rank}"),
                        "its thread panicked".to_string(),
                    );
                    (Err(e), None)
                })
            })
            .collect()
    });
    let mut first_stopped = None;
    let mut out = Vec::with_capacity(size);
    for (result, stopped_by) in results {
        match result {
            Ok(v) => out.push(v),
            Err(e) if stopped_by.is_none() => return Err(e),
            Err(e) => {
                first_stopped.get_or_insert(e);
            }
        }
    }
    match first_stopped {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A message under construction, little-endian.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// An empty message with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> Self {
        Writer(Vec::with_capacity(bytes))
    }
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// The finished message.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads a message written by [`Writer`]; running out of bytes is an error naming the
/// message (`what`) and the sender.
pub struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    what: &'a str,
    from: usize,
}

impl<'a> Reader<'a> {
    /// Reads `data`, the message `what` from rank `from`.
    pub fn new(data: &'a [u8], what: &'a str, from: usize) -> Self {
        Reader {
            data,
            at: 0,
            what,
            from,
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self
            .data
            .get(self.at..self.at + N)
            .and_then(|b| <[u8; N]>::try_from(b).ok())
            .ok_or_else(|| {
                OrogenError::invalid(
                    format!("tiles message {} from rank {}", self.what, self.from),
                    format!("ends at byte {} of {}", self.at, self.data.len()),
                )
            })?;
        self.at += N;
        Ok(bytes)
    }
    pub fn u8(&mut self) -> Result<u8> {
        self.take().map(u8::from_le_bytes)
    }
    pub fn u32(&mut self) -> Result<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub fn f32(&mut self) -> Result<f32> {
        self.take().map(f32::from_le_bytes)
    }
    pub fn f64(&mut self) -> Result<f64> {
        self.take().map(f64::from_le_bytes)
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.at
    }
    /// Errors unless every byte was read (a message of the wrong shape).
    pub fn finish(&self) -> Result<()> {
        if self.at == self.data.len() {
            return Ok(());
        }
        Err(OrogenError::invalid(
            format!("tiles message {} from rank {}", self.what, self.from),
            format!("has {} bytes left over", self.data.len() - self.at),
        ))
    }
}

/// A value that travels in messages as fixed-size little-endian bytes.
pub trait Wire: Copy + Default {
    fn put(self, w: &mut Writer);
    fn get(r: &mut Reader) -> Result<Self>;
}

impl Wire for u32 {
    fn put(self, w: &mut Writer) {
        w.u32(self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.u32()
    }
}

impl Wire for u8 {
    fn put(self, w: &mut Writer) {
        w.u8(self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.u8()
    }
}

impl Wire for f32 {
    fn put(self, w: &mut Writer) {
        w.f32(self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.f32()
    }
}

impl Wire for f64 {
    fn put(self, w: &mut Writer) {
        w.f64(self)
    }
    fn get(r: &mut Reader) -> Result<Self> {
        r.f64()
    }
}

impl<const N: usize> Wire for [f32; N]
where
    [f32; N]: Default,
{
    fn put(self, w: &mut Writer) {
        self.iter().for_each(|&v| w.f32(v))
    }
    fn get(r: &mut Reader) -> Result<Self> {
        let mut out = [0.0f32; N];
        for v in &mut out {
            *v = r.f32()?;
        }
        Ok(out)
    }
}

/// Every rank's `values` (row-major over its tile's interior) as the whole map at `root`
/// (`None` elsewhere). Errors name `what`.
pub fn gather_map<T: Wire>(
    comm: &mut impl Comm,
    layout: &super::TileLayout,
    root: usize,
    tag: u32,
    values: &[T],
    what: &str,
) -> Result<Option<Vec<T>>> {
    let mut w = Writer::with_capacity(std::mem::size_of_val(values));
    values.iter().for_each(|v| v.put(&mut w));
    let all = comm.gather(root, tag, w.into_bytes())?;
    if comm.rank() != root {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(all.len());
    for (rank, bytes) in all.iter().enumerate() {
        let mut r = Reader::new(bytes, what, rank);
        let n = layout.tile(rank).interior.len();
        let part = (0..n).map(|_| T::get(&mut r)).collect::<Result<Vec<T>>>()?;
        r.finish()?;
        parts.push(part);
    }
    layout.assemble(&parts, what).map(Some)
}
